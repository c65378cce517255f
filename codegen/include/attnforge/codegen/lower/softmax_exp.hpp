// 2^x for softmax. The attention cores keep their scores in base 2 (s·log2(e), the factor folded into
// the score's scale where only masks lie between the product and the softmax), so that e^(s − m) is
// 2^(s₂ − m₂): no multiply by log2(e) and no two-step reduction by ln2 per element. The argument is a
// score minus its row's maximum, so it is ≤ 0, −∞ (a masked key) or NaN (a NaN score). Halide::exp
// handles the whole real line and costs about 25 instructions per vector on AVX-512; this one about 12.
//
// Method: x = n + r with n an integer, r ∈ [−½, ½] (x − n is exact in float: n is within ½ of x);
// 2ʳ by a degree-5 polynomial (coefficients fitted to the relative error on [−½, ½], a Chebyshev fit
// weighted by 1/2ʳ: relative error 1.7e-7, 3.2e-7 with float Horner, measured over 200001 points);
// 2ⁿ from the float exponent bits.
//   x < −126 (including −∞) → exactly 0: masked keys weigh nothing, and 2⁻¹²⁶ ≈ 1.2e-38 is below
//                             anything a row sum can notice;
//   NaN → NaN (checked with Halide::is_nan, which fast-math flags cannot fold away);
//   x > 127 (never an input here) saturates at 2¹²⁷·2ʳ instead of +∞.
#pragma once

#include <Halide.h>

namespace attnforge::codegen {

// log2(e): scores are multiplied by it once, where they are made (lower/attention.hpp).
inline constexpr double log2_e = 1.44269504088896340736;

inline Halide::Expr softmax_exp2(const Halide::Expr& x) {
    using Halide::Expr;
    // n = round(x) for x ≤ 0, as a truncation of x − ½ toward zero (one conversion; a float round
    // splits into two 256-bit halves on AVX-512). Clamped before the conversion so that −∞ and NaN
    // give a harmless finite n: their results are decided by the select and by r.
    const Expr t = Halide::clamp(x - 0.5f, -127.0f, 127.0f);
    const Expr e = Halide::cast<int>(t);
    const Expr r = x - Halide::cast<float>(e);
    Expr p = 1.32609214e-3f;
    for (float c : {9.67017600e-3f, 5.55071218e-2f, 2.40222243e-1f, 6.93147003e-1f, 1.00000005f}) p = p * r + c;
    const Expr two_to_n = Halide::reinterpret<float>((e + 127) << 23);
    // Halide's fast-math flags (lower/ieee.hpp) let `x < -126` be true for a NaN, which would turn a
    // NaN score into a weight of 0; Halide::is_nan evaluates x strictly, so NaN stays NaN. The
    // polynomial itself keeps the flags: strict_float on all of it cost 8% of sdpa (no FMAs).
    return Halide::select(Halide::is_nan(x), x, Halide::select(x < -126.0f, 0.0f, p * two_to_n));
}

}  // namespace attnforge::codegen
