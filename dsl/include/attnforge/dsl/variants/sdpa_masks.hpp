// sdpa with PyTorch's attn_mask (torch.nn.functional.scaled_dot_product_attention, docs/contract.md §1): a mask
// (B or 1, H or 1, Lq, Lk), broadcast over a batch or head axis of size 1, as a model passes it; H, Hkv, E and the
// scale at run time, as sdpa's. Key tiles whose pairs the mask removes for a whole query tile are skipped (the
// streaming kernels' block-mask pre-pass).
//   sdpa_masked          bool attn_mask, true = the pair takes part
//   sdpa_additive        float attn_mask added to the scaled scores, −inf removing the pair (transformers' float masks)
//   sdpa_causal_masked   bool attn_mask and causal (top-left), both applying
//   decode_masked        decode (a cache, bottom-right causal) with a bool attn_mask over the cache's slots
//                        (B or 1, H or 1, Lq, Lmax): transformers' mask over a static cache
//   softcap_masked       soft-capped scores (softcap_attention's, run-time cap) with a bool attn_mask: Gemma-2 as
//                        transformers calls it, the mask carrying causality, its window and padding
//   decode_softcap_masked  the same over a cache (decode_masked's form)
#pragma once

#include <attnforge/dsl/variants/common.hpp>
#include <attnforge/dsl/variants/decode.hpp>
#include <attnforge/dsl/variants/softcap.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto torch_bool_mask = broadcast_mask<"attn_mask", "q", "kv">();
inline constexpr auto torch_float_mask = broadcast_additive_mask<"attn_mask", "q", "kv">();

inline constexpr auto sdpa_masked =
    make_graph<"sdpa_masked">(attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, boolean_mask(torch_bool_mask)));
inline constexpr auto sdpa_additive =
    make_graph<"sdpa_additive">(attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, additive_mask(torch_float_mask)));
inline constexpr auto sdpa_causal_masked = make_graph<"sdpa_causal_masked">(
    attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, causal, boolean_mask(torch_bool_mask)));
inline constexpr auto decode_masked = make_graph<"decode_masked">(
    attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, kv_cache(kv_length), causal, boolean_mask(torch_bool_mask)));

inline constexpr auto softcap_masked =
    make_graph<"softcap_masked">(weighted_sum(softmax(mask(softcapped_scores, boolean_mask(torch_bool_mask))), sdpa_v));
inline constexpr auto decode_softcap_masked = make_graph<"decode_softcap_masked">(weighted_sum(
    softmax(mask(mask(mask(softcapped_scores, kv_cache(kv_length)), causal), boolean_mask(torch_bool_mask))), sdpa_v));

}  // namespace attnforge::dsl::variants
