// Products over pairs of bf16 values, the form in which Halide emits AVX512_BF16's vdpbf16ps (each
// float32 lane += a₂ᵢ·b₂ᵢ + a₂ᵢ₊₁·b₂ᵢ₊₁ from two vectors of 32 bf16): a reduction whose innermost
// reduction variable runs over the two elements of a pair, multiplying f32(bf16) by f32(bf16). The
// schedule then vectorizes that variable with atomic() (src/schedules/: register_tile_accumulator and the
// P·V schedules), and the operand
// that varies along the vector lanes must hold each lane's pair adjacent in memory: K packed
// (pair, key, e/2) and V packed (pair, e, key/2) (lower/score.hpp, lower/materialized.hpp,
// lower/streaming.hpp). Used where Tiles::bf16_products is set: bf16 kernels on targets with the
// instruction (docs/storage_types.md).
#pragma once

#include <Halide.h>

#include <cstdint>
#include <string>

namespace attnforge::codegen::detail {

// float32 → bf16, to nearest even, on the bits: as runtime::bf16_from_float, a NaN stays NaN (Halide's
// own conversion can carry an all-ones NaN payload into the exponent). Exact for values that are bf16
// already (inputs of a bf16 kernel, converted to float32 where read).
inline Halide::Expr round_to_bf16(const Halide::Expr& x) {
    using Halide::Expr;
    auto u32 = [](std::uint32_t v) { return Halide::cast(Halide::UInt(32), Expr(v)); };
    const Expr bits = Halide::reinterpret(Halide::UInt(32), x);
    const Expr nan = (bits & u32(0x7fffffff)) > u32(0x7f800000);
    const Expr rounded = (bits + u32(0x7fff) + ((bits >> u32(16)) & u32(1))) >> u32(16);
    const Expr kept = Halide::select(nan, (bits >> u32(16)) | u32(0x0040), rounded);
    return Halide::reinterpret(Halide::BFloat(16), Halide::cast(Halide::UInt(16), kept));
}

// A softmax weight (an exp: in [0, 1], or NaN from a NaN input) → bf16, to nearest with ties away from
// zero: one add and the high half, where round_to_bf16 spends nine integer instructions a vector on the
// tie test and the NaN case (9 % of bf16 sdpa's time in a profile). Same maximum error (half an ulp,
// 2⁻⁹ relative); ties (the low 16 bits exactly 0x8000) round up instead of to even. A quiet NaN (every NaN
// arithmetic makes) stays NaN: the add cannot carry past its quiet bit.
// The add is on int32 and the shift on uint32: written as one uint32 (bits + 0x8000) >> 16, Halide
// recognizes a rounding_shift_right and lowers it, lacking an x86 instruction, to an overflow-safe
// average of seven instructions (the vector loop that rounds P took 8.6 % of bf16 sdpa, L = 2048).
inline Halide::Expr round_weight_to_bf16(const Halide::Expr& weight) {
    const Halide::Expr carried = Halide::reinterpret(Halide::Int(32), weight) + 0x8000;
    const Halide::Expr high = Halide::reinterpret(Halide::UInt(32), carried) >> Halide::cast(Halide::UInt(32), 16);
    return Halide::reinterpret(Halide::BFloat(16), Halide::cast(Halide::UInt(16), high));
}

// A reduction over `length` elements in pairs: x the element of the pair (innermost), y the pair.
// An odd length has one element past its end: the packed operand is 0 there.
inline Halide::RDom pair_reduction(const Halide::Expr& length, const std::string& name) {
    return Halide::RDom(0, 2, 0, (length + 1) / 2, name);
}

// The product term of a pair reduction: both operands bf16, widened exactly.
inline Halide::Expr pair_product(const Halide::Expr& a, const Halide::Expr& b) {
    return Halide::cast<float>(a) * Halide::cast<float>(b);
}

}  // namespace attnforge::codegen::detail
