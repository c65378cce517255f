// Transcendentals of the expression language that Halide would lower to a scalar library call per
// element. Halide inlines exp, log and pow as vector polynomials of its own (tests/codegen/
// test_vector_math.cpp measures them), but Halide::tanh becomes one `tanhf` call per lane: a
// soft-capped score then cost more than the two products around it (softcap_attention ran at a
// third of sdpa_causal's speed). These are straight-line vector code, in the type of their argument
// (float32 in scores; float64 in the index arithmetic of a read, where tanh keeps Halide's exact one).
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>

#include <Halide.h>

#include <limits>

namespace attnforge::codegen {

// tanh(x) in float32, relative error ≤ 4e-7 over the whole real line (3.0e-7 measured against the
// float64 tanh, tests/codegen/test_vector_math.cpp), in about 15 vector operations.
//
// Method, on a = |x| clamped to 9 (tanh 9 rounds to 1 in float32; the result is capped at 1), the
// sign copied back: tanh a = a·P(a²)/Q(a²), P of degree 5 and Q of degree 3 in a², a rational fit to
// the relative error on [0, 9] (iteratively reweighted linearized least squares, float64; 3.2e-7
// evaluated in float32 Horner over 4·10⁵ points). Near 0 it is a·(1 + O(a²)): no cancellation, and
// exact for zero and subnormal a. One division, no exp: an exp-based form (1 − 2/(e^(2a) + 1), with
// a polynomial below 0.625) was as accurate but cost twice the operations, and soft-capping then ran
// at 0.67 of causal attention's speed.
// |x|, the clamp and the sign are integer operations on the bits, so ±∞ never meets the float
// arithmetic: under Halide's fast-math flags (no infinities) tanh(+∞) came out −1. NaN → NaN (an integer test
// of the bits, which those flags cannot fold away).
inline Halide::Expr vector_tanh(const Halide::Expr& x) {
    using Halide::Expr;
    if (x.type() != Halide::Float(32)) return Halide::tanh(x);  // the fit is float32's
    const Expr bits = Halide::reinterpret<uint32_t>(x);
    const Expr sign = bits & Halide::Internal::make_const(Halide::UInt(32), uint64_t{0x80000000u});
    const Expr magnitude = bits & Halide::Internal::make_const(Halide::UInt(32), uint64_t{0x7fffffffu});
    const Expr a = Halide::reinterpret<float>(Halide::min(magnitude, Halide::reinterpret<uint32_t>(Expr(9.0f))));
    const Expr y = a * a;
    Expr p = 1.825359562e-11f;
    for (float c : {-1.277987949e-08f, 9.267271404e-06f, 2.920749721e-03f, 1.291921909e-01f, 9.999999418e-01f})
        p = p * y + c;
    Expr q = 2.280982494e-04f;
    for (float c : {2.376312467e-02f, 4.625250315e-01f, 1.0f}) q = q * y + c;
    const Expr t = Halide::min(a * p / q, 1.0f);
    const Expr signed_result = Halide::reinterpret<float>(Halide::reinterpret<uint32_t>(t) | sign);
    // NaN stays NaN. Tested on the bits (a magnitude above +∞'s): Halide::is_nan would evaluate x again with strict
    // arithmetic, a run-time cap's reciprocal (score · (1 / cap)) included, a scalar division per vector.
    const Expr is_nan = magnitude > Halide::Internal::make_const(Halide::UInt(32), uint64_t{0x7f800000u});
    return Halide::select(is_nan, x, signed_result);
}

// e^x, 2^x and ln x: Halide's inline polynomials (Halide::exp, Halide::pow, Halide::log: no library
// call), evaluated with IEEE semantics (lower/ieee.hpp) and the special values put back where they
// differ from <cmath>: under the fast-math flags exp(NaN) came out 0 and log(NaN) 89.1, and even with
// strict arithmetic exp(+∞) and 2^(+∞) came out 0 and log(+∞) 88.7 (Halide's range reduction). None of
// the built-in variants uses them; a modifier that does pays the strict arithmetic (no FMA contraction).
namespace detail {
inline Halide::Expr with_specials(const Halide::Expr& x, const Halide::Expr& finite_result) {
    const Halide::Expr inf = Halide::Internal::make_const(x.type(), std::numeric_limits<double>::infinity());
    return ieee(Halide::select(Halide::is_nan(x), x, Halide::select(x == inf, inf, finite_result)));
}
}  // namespace detail

inline Halide::Expr vector_exp(const Halide::Expr& x) {
    return detail::with_specials(x, Halide::exp(x));
}
inline Halide::Expr vector_exp2(const Halide::Expr& x) {
    return detail::with_specials(x, Halide::pow(Halide::cast(x.type(), 2), x));
}
inline Halide::Expr vector_log(const Halide::Expr& x) {
    return detail::with_specials(x, Halide::log(x));
}

}  // namespace attnforge::codegen
