// Prefix-LM attention (T5's prefix language model, UniLM): the first prefix_length[b] tokens of each
// sequence are a bidirectional prefix that every query sees; the rest is causal. The prefix length is
// an input, one per batch entry (B), read by the predicate as FlexAttention's mask_mod would.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto prefix_length = batch_indices<"prefix_length">();

inline constexpr auto prefix_lm_attention = [] {
    constexpr auto q = heads_input<"q", 64, "tokens">();
    constexpr auto k = heads_input<"k", 64, "tokens">();
    constexpr auto v = heads_input<"v", 64, "tokens">();
    constexpr auto prefix_or_causal =
        predicate([](auto b, auto, auto q_idx, auto kv_idx) { return kv_idx <= q_idx || kv_idx < prefix_length(b); });
    return make_graph<"prefix_lm_attention">(attention(q, k, v, prefix_or_causal));
}();

}  // namespace attnforge::dsl::variants
