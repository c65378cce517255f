// A full pre-LN self-attention layer with sinusoidal positional encoding (seed 001 §4, §6):
// h = x + PE; y = h + MHA(LayerNorm(h)).
#pragma once

#include <attnforge/dsl/nodes/add.hpp>
#include <attnforge/dsl/nodes/layer_norm.hpp>
#include <attnforge/dsl/nodes/positional_encoding.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto positional_self_attention_layer = [] {
    constexpr auto h = positional_encoding(x512);
    constexpr auto n = layer_norm(h, weight_vector<"gamma", 512>(), weight_vector<"beta", 512>());
    return make_graph<"positional_self_attention_layer">(add(h, multi_head_attention<8, 8>(n, n, wq, wk, wv, wo)));
}();

}  // namespace attnforge::dsl::variants
