// Decoding over a quantized KV cache (docs/contract.md §1, caches; docs/storage_types.md): `decode` whose keys and
// values are stored as uint8 codes with a float32 scale and zero point per (b, h, token), OpenVINO's by-token layout:
//   decode_u8   q (B, H, Lq, E); k, v (B, Hkv, Lmax, E) uint8; k_scale, k_zero, v_scale, v_zero (B, Hkv, Lmax)
//               float32; kv_length (B) int32. H, Hkv and E at run time, scale optional, as decode's.
// It means decode over K = (k − k_zero)·k_scale and V = (v − v_zero)·v_scale; the kernels read a quarter of a
// float32 cache's bytes (plus 8 bytes a token and head) and convert the codes in registers. attnforge::quantize_
// into_cache (runtime/quantized_cache.hpp) writes new tokens into such a cache.
#pragma once

#include <attnforge/dsl/nodes/dequantize.hpp>
#include <attnforge/dsl/variants/common.hpp>
#include <attnforge/dsl/variants/decode.hpp>

namespace attnforge::dsl::variants {

// One quantized cache tensor of sequence "kv": its codes and, per token, their scale and zero point.
template <fixed_string Codes, fixed_string Scale, fixed_string Zero>
constexpr auto quantized_cache() {
    return dequantize(quantized_codes<Codes, runtime_head_width, "kv", runtime_kv_heads>(),
                      token_values<Scale, "kv", runtime_kv_heads, quantization_role::scale>(),
                      token_values<Zero, "kv", runtime_kv_heads, quantization_role::zero>());
}

inline constexpr auto decode_u8 = make_graph<"decode_u8">(attention(sdpa_q, quantized_cache<"k", "k_scale", "k_zero">(),
                                                                    quantized_cache<"v", "v_scale", "v_zero">(),
                                                                    sdpa_scale, kv_cache(kv_length), causal));

}  // namespace attnforge::dsl::variants
