// Multi-head self-attention in the seed-002 configuration, plain, causal, with key padding and
// with both.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto mha = make_graph<"mha">(multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo));
inline constexpr auto mha_causal =
    make_graph<"mha_causal">(multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo, causal));
inline constexpr auto mha_padding = make_graph<"mha_padding">(
    multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo, key_padding(key_padding_mask<"key_padding_mask", "x">())));
// A decoder's own mask over a padded batch (seed 002 §5): causal and key padding together.
inline constexpr auto mha_causal_padding = make_graph<"mha_causal_padding">(multi_head_attention<8, 8>(
    x512, x512, wq, wk, wv, wo, causal, key_padding(key_padding_mask<"key_padding_mask", "x">())));

}  // namespace attnforge::dsl::variants
