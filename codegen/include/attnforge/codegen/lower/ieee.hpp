// ieee(e): e evaluated with IEEE semantics for infinities and NaN.
//
// Halide compiles float arithmetic with LLVM's fast-math flags, no-NaNs and no-Infs included: under
// them a comparison with −∞ may be folded to false and a select may become arithmetic (0·∞ = NaN).
// Masking and the guards for fully masked rows compare with −∞, so each of those expressions is
// wrapped in Halide::strict_float, which drops the flags for that expression only (and everything
// inside it: keep the wrapped expression small); the matrix products and the exps keep them.
// Measured: a fully masked row came out NaN from a streaming kernel before this (tests/numerics).
#pragma once

#include <Halide.h>

#include <limits>

namespace attnforge::codegen {

inline Halide::Expr ieee(const Halide::Expr& e) {
    return Halide::strict_float(e);
}

// A masked score.
inline Halide::Expr minus_infinity() {
    return Halide::Expr(-std::numeric_limits<float>::infinity());
}

}  // namespace attnforge::codegen
