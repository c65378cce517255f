// 2^x for softmax. The attention cores keep their scores in base 2 (s·log2(e), the factor folded into
// the score's scale where only masks lie between the product and the softmax), so that e^(s − m) is
// 2^(s₂ − m₂): no multiply by log2(e) and no two-step reduction by ln2 per element. The argument is a
// score minus its row's maximum, so it is ≤ 0, −∞ (a masked key) or NaN (a NaN score). Halide::exp
// handles the whole real line and costs about 25 instructions per vector on AVX-512; this one about 12.
//
// Method: x = n + r with n an integer, r ∈ [−½, ½]; 2ʳ by a degree-5 polynomial (coefficients fitted to
// the relative error on [−½, ½], a Chebyshev fit weighted by 1/2ʳ: relative error 1.7e-7, 3.2e-7 with
// float Horner, measured over 200001 points); 2ⁿ from the float exponent bits. n comes from the float
// adder itself: y = x + (1.5·2²³ + 127) rounds x to an integer (y's ulp is 1, to nearest), y − magic is
// that integer exactly, and y's low mantissa bits hold n + 127, which a shift by 23 moves into the
// exponent field. Four vector instructions fewer than a clamp, a conversion to int32 and back and an
// integer add (18 instead of 22 a vector on AVX-512; sdpa bf16 spends a sixth of its time in this loop).
// Those two steps are evaluated strictly (Halide::strict_float): under fast-math LLVM folds
// (x + magic) − magic back to x, which makes r = 0.
//   x < −126 (including −∞) → exactly 0: masked keys weigh nothing, and 2⁻¹²⁶ ≈ 1.2e-38 is below
//                             anything a row sum can notice;
//   NaN → NaN (checked with Halide::is_nan, which fast-math flags cannot fold away);
//   x > 127 (never a score minus its row max; a key past Lk whose clamped score a position modifier
//            lifted could be one) saturates at 2¹²⁷: finite, so a weight times a zero V is zero.
#pragma once

#include <Halide.h>

namespace attnforge::codegen {

// log2(e): scores are multiplied by it once, where they are made (lower/attention.hpp).
inline constexpr double log2_e = 1.44269504088896340736;

// How exact 2ʳ must be: float32 weights (degree 5, relative error 3.2e-7), or weights that are rounded to
// bf16 anyway (degree 3, 7.5e-5 measured with float Horner over 200001 points: 4 % of the half ulp 2⁻⁹ that
// rounding a weight to bf16 costs, and two FMAs fewer in a loop of 18 instructions a vector).
enum class ExpAccuracy { float32, bf16_weights };

inline Halide::Expr softmax_exp2(const Halide::Expr& x, ExpAccuracy accuracy = ExpAccuracy::float32) {
    using Halide::Expr;
    constexpr float round_to_exponent = 12582912.0f + 127.0f;  // 1.5·2²³ + 127
    // Clamped above only: below −126 the select decides, and −∞ (r = NaN there) needs no clamp.
    const Expr capped = Halide::min(x, 127.0f);
    const Expr y = Halide::strict_float(capped + round_to_exponent);
    const Expr r = Halide::strict_float(capped - (y - round_to_exponent));
    Expr p;
    if (accuracy == ExpAccuracy::bf16_weights) {
        p = 5.51716648e-2f;
        for (float c : {2.42611125e-1f, 6.93260968e-1f, 9.99928057e-1f}) p = p * r + c;
    } else {
        p = 1.32609214e-3f;
        for (float c : {9.67017600e-3f, 5.55071218e-2f, 2.40222243e-1f, 6.93147003e-1f, 1.00000005f}) p = p * r + c;
    }
    const Expr two_to_n = Halide::reinterpret<float>(Halide::reinterpret<int>(y) << 23);
    // Halide's fast-math flags (lower/ieee.hpp) let `x < -126` be true for a NaN, which would turn a
    // NaN score into a weight of 0; Halide::is_nan evaluates x strictly, so NaN stays NaN. The
    // polynomial itself keeps the flags: strict_float on all of it cost 8% of sdpa (no FMAs).
    return Halide::select(Halide::is_nan(x), x, Halide::select(x < -126.0f, 0.0f, p * two_to_n));
}

}  // namespace attnforge::codegen
