// exp for softmax: the argument is a score minus its row's maximum, so it is ≤ 0, −∞ (a masked key)
// or NaN (a NaN score). Halide::exp handles the whole real line and costs about 25 instructions per
// vector on AVX-512; this one costs about 15, which is 5–10% of an attention core.
//
// Method: x = n·ln2 + r with n = round(x / ln2), r ∈ [−ln2/2, ln2/2] in two steps (Cody–Waite: ln2
// split in a part exact in float and the rest, so that n·ln2_hi is exact); eʳ by its degree-6 Taylor
// polynomial (relative error ≤ 2e-7 on that interval); 2ⁿ from the float exponent bits.
//   x < −87 (including −∞) → exactly 0: masked keys weigh nothing, and exp(−87) ≈ 1.6e-38 is below
//                            anything a row sum can notice;
//   NaN → NaN (checked with Halide::is_nan, which fast-math flags cannot fold away);
//   x > 88 (never an input here) saturates at 2¹²⁷·eʳ instead of +∞.
#pragma once

#include <Halide.h>

namespace attnforge::codegen {

inline Halide::Expr softmax_exp(const Halide::Expr& x) {
    using Halide::Expr;
    // n = round(x / ln2) for x ≤ 0, as a truncation of x/ln2 − ½ toward zero (one conversion; a float
    // round splits into two 256-bit halves on AVX-512). Clamped before the conversion so that −∞ and
    // NaN give a harmless finite n: their results are decided by the select and by r.
    const Expr t = Halide::clamp(x * 1.44269504088896341f - 0.5f, -127.0f, 127.0f);
    const Expr e = Halide::cast<int>(t);
    const Expr n = Halide::cast<float>(e);
    const Expr r = (x - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    Expr p = 1.0f / 720.0f;
    for (float c : {1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f}) p = p * r + c;
    const Expr two_to_n = Halide::reinterpret<float>((e + 127) << 23);
    // Halide's fast-math flags (lower/ieee.hpp) let `x < -87` be true for a NaN, which would turn a
    // NaN score into a weight of 0; Halide::is_nan evaluates x strictly, so NaN stays NaN. The
    // polynomial itself keeps the flags: strict_float on all of it cost 8% of sdpa (no FMAs).
    return Halide::select(Halide::is_nan(x), x, Halide::select(x < -87.0f, 0.0f, p * two_to_n));
}

}  // namespace attnforge::codegen
