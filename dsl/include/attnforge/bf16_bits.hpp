// bf16 (bfloat16: float32's sign and exponent, 7 fraction bits) as its bits, and the one rounding from float32 to
// it, to nearest even, as the kernels' own conversions do: shared by the runtime (stored tensors) and the
// interpreter (EvaluateOptions::round_projection_operands), which sits below the runtime.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace attnforge {

// float32 → bf16: the upper half of the bits, rounded to nearest even (a carry into the exponent rounds
// up to the next binade or to ±∞, as it should). A NaN stays a NaN (quiet, its sign kept): the plain
// rounding could carry a NaN's payload into an infinity.
inline std::uint16_t bf16_from_float(float x) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    if (std::isnan(x)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
    return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
inline float float_from_bf16(std::uint16_t b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace attnforge
