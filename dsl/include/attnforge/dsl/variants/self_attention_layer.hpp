// Pre-LN self-attention layer: y = x + MHA(LayerNorm(x)).
#pragma once

#include <attnforge/dsl/nodes/add.hpp>
#include <attnforge/dsl/nodes/layer_norm.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto self_attention_layer = [] {
    constexpr auto h = layer_norm(x512, weight_vector<"gamma", 512>(), weight_vector<"beta", 512>());
    return make_graph<"self_attention_layer">(add(x512, multi_head_attention<8, 8>(h, h, wq, wk, wv, wo)));
}();

}  // namespace attnforge::dsl::variants
