// Decoding over a KV cache (docs/contract.md §1, §2): the Lq newest tokens' queries attend to a cache of
// keys and values with Lmax slots, of which the first kv_length[b] hold keys. Query i sits at position
// kv_length[b] − Lq + i and sees the cache up to itself (causal, bottom-right aligned): Lq = 1 is one
// generated token, Lq > 1 a few at once (speculative decoding, chunked prefill).
//   decode                 q (B, H, Lq, E), k, v (B, Hkv, Lmax, E), H, Hkv and E at run time; scale optional
//   decode_gqa             q (B, 32, Lq, 128), k, v (B, 8, Lmax, 128): Llama-3-8B's attention
//   decode_sliding_window  decode within a window of keys back from each query's position (Mistral's local
//                          attention; `window` an optional int32 input, 128 where not given), the decode form
//                          of sliding_window_attention
//   decode_softcap         decode of soft-capped scores within an optional window (Gemma-2's attention: `cap`
//                          20 and `window` none where not given), the decode form of softcap_attention
//   decode_rope            decode whose queries are rotated (RoPE) at their positions in the cache; the
//                          cache holds keys already rotated at theirs (as LLaMA's KV cache does)
#pragma once

#include <attnforge/dsl/nodes/rope.hpp>
#include <attnforge/dsl/variants/common.hpp>
#include <attnforge/dsl/variants/sliding_window.hpp>
#include <attnforge/dsl/variants/softcap.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto kv_length = cache_lengths<"kv_length", "kv">();

inline constexpr auto decode =
    make_graph<"decode">(attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, kv_cache(kv_length), causal));

inline constexpr auto decode_gqa = [] {
    constexpr auto q = heads_input<"q", 128, "q", 32>();
    constexpr auto k = heads_input<"k", 128, "kv", 8>();
    constexpr auto v = heads_input<"v", 128, "kv", 8>();
    return make_graph<"decode_gqa">(attention(q, k, v, kv_cache(kv_length), causal));
}();

inline constexpr auto decode_sliding_window = make_graph<"decode_sliding_window">(
    attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, kv_cache(kv_length), sliding_window(window_length)));

inline constexpr auto decode_softcap = make_graph<"decode_softcap">(
    weighted_sum(softmax(mask(mask(softcapped_scores, kv_cache(kv_length)), sliding_window(optional_window))), sdpa_v));

inline constexpr auto decode_rope =
    make_graph<"decode_rope">(attention(rope_in_cache(q64, kv_length), k64, v64, kv_cache(kv_length), causal));

}  // namespace attnforge::dsl::variants
