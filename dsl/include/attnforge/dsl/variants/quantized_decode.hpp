// Decoding over a quantized KV cache (docs/contract.md §1, caches; docs/storage_types.md): `decode` whose keys and
// values are stored as 8-bit codes with float32 scales. q (B, H, Lq, E), kv_length (B) int32, H, Hkv and E at run
// time, scale optional, as decode's; k, v (B, Hkv, Lmax, E) codes and their scales:
//   decode_u8      uint8 with a scale and zero point per (b, h, token), k_scale, k_zero, v_scale, v_zero
//                  (B, Hkv, Lmax): OpenVINO's by-token layout. K = (k − k_zero)·k_scale, V likewise.
//   decode_i8      int8, symmetric, a scale per (b, h, token), k_scale, v_scale (B, Hkv, Lmax). K = k·k_scale.
//   decode_i8_g32  int8, symmetric, a scale per 32 channels of a token, k_scale, v_scale (B, Hkv, Lmax, E/32):
//                  llama.cpp's q8_0 blocks (with float32 scales). K = k·k_scale[..., e/32]. E a multiple of 32.
//   decode_u8_kc128  uint8 keys by channel, KIVI's: k_scale, k_zero (B, Hkv, ⌈Lmax/128⌉, E) per channel of each
//                  block of 128 tokens, K = (k − k_zero[.., l/128, e])·k_scale[.., l/128, e]; values as decode_u8's.
// The kernels read about a quarter of a float32 cache's bytes and convert the codes in registers.
// attnforge::quantize_into_cache (runtime/quantized_cache.hpp) writes new tokens into such a cache.
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

// Keys of sequence "kv" as uint8 codes with a scale and zero point per channel of each block of T tokens.
template <fixed_string Codes, fixed_string Scale, fixed_string Zero, int T>
constexpr auto channel_quantized_cache() {
    return dequantize(
        quantized_codes<Codes, runtime_head_width, "kv", runtime_kv_heads>(),
        channel_values<Scale, "kv", runtime_kv_heads, runtime_head_width, T, quantization_role::scale>(),
        channel_values<Zero, "kv", runtime_kv_heads, runtime_head_width, T, quantization_role::zero>());
}

// int8 codes of sequence "kv" without a zero point: a scale per token (Group 0) or per Group channels.
template <fixed_string Codes, fixed_string Scale, int Group>
constexpr auto symmetric_cache() {
    constexpr auto codes = quantized_codes<Codes, runtime_head_width, "kv", runtime_kv_heads, element_type::int8>();
    if constexpr (Group == 0)
        return dequantize(codes, token_values<Scale, "kv", runtime_kv_heads, quantization_role::scale>());
    else
        return dequantize(codes, group_scales<Scale, "kv", runtime_kv_heads, runtime_head_width, Group>());
}

inline constexpr auto decode_u8 = make_graph<"decode_u8">(attention(sdpa_q, quantized_cache<"k", "k_scale", "k_zero">(),
                                                                    quantized_cache<"v", "v_scale", "v_zero">(),
                                                                    sdpa_scale, kv_cache(kv_length), causal));

inline constexpr auto decode_i8 =
    make_graph<"decode_i8">(attention(sdpa_q, symmetric_cache<"k", "k_scale", 0>(),
                                      symmetric_cache<"v", "v_scale", 0>(), sdpa_scale, kv_cache(kv_length), causal));

inline constexpr auto decode_i8_g32 = make_graph<"decode_i8_g32">(
    attention(sdpa_q, symmetric_cache<"k", "k_scale", 32>(), symmetric_cache<"v", "v_scale", 32>(), sdpa_scale,
              kv_cache(kv_length), causal));

// Keys by channel over blocks of 128 tokens (about u8's bytes: E + 8·E/128 a token and head), values by token.
inline constexpr auto decode_u8_kc128 = make_graph<"decode_u8_kc128">(
    attention(sdpa_q, channel_quantized_cache<"k", "k_scale", "k_zero", 128>(),
              quantized_cache<"v", "v_scale", "v_zero">(), sdpa_scale, kv_cache(kv_length), causal));

}  // namespace attnforge::dsl::variants
