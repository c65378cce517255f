// Multi-head self-attention in the seed-002 configuration, plain, with projection biases,
// causal, with key padding and with both.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto mha = make_graph<"mha">(multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo));
inline constexpr auto mha_causal =
    make_graph<"mha_causal">(multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo, causal));
inline constexpr auto mha_padding = make_graph<"mha_padding">(
    multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo, key_padding(key_padding_mask<"key_padding_mask", "x">())));
// With a bias on every projection, as PyTorch's nn.MultiheadAttention has by default (bq, bk, bv, bo (512)).
inline constexpr auto mha_bias = [] {
    constexpr auto q = split_heads<8>(linear(x512, wq, weight_vector<"bq", 512>()));
    constexpr auto k = split_heads<8>(linear(x512, wk, weight_vector<"bk", 512>()));
    constexpr auto v = split_heads<8>(linear(x512, wv, weight_vector<"bv", 512>()));
    return make_graph<"mha_bias">(linear(merge_heads(attention(q, k, v)), wo, weight_vector<"bo", 512>()));
}();
// A decoder's own mask over a padded batch (seed 002 §5): causal and key padding together.
inline constexpr auto mha_causal_padding = make_graph<"mha_causal_padding">(multi_head_attention<8, 8>(
    x512, x512, wq, wk, wv, wo, causal, key_padding(key_padding_mask<"key_padding_mask", "x">())));

}  // namespace attnforge::dsl::variants
