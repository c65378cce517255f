// A Transformer decoder layer's attention (seed 001 §7), pre-LN: masked self-attention over the
// decoder's tokens x, then cross-attention from them to the encoder's output memory (its padding
// masked), each sub-layer with its LayerNorm and residual (the feed-forward sub-layer is not attention
// and is left out):
//   h = x + SelfMHA(LN1(x), causal)          softmax labelled "attention" (the attention weights)
//   y = h + CrossMHA(LN2(h), memory, memory_padding_mask)   softmax labelled "cross_attention"
#pragma once

#include <attnforge/dsl/nodes/add.hpp>
#include <attnforge/dsl/nodes/layer_norm.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto decoder_layer = [] {
    constexpr auto memory = activation<"memory", 512>();
    constexpr auto memory_padding = key_padding_mask<"memory_padding_mask", "memory">();
    constexpr auto n1 = layer_norm(x512, weight_vector<"ln1_gamma", 512>(), weight_vector<"ln1_beta", 512>());
    constexpr auto h = add(x512, multi_head_attention<8, 8>(n1, n1, wq, wk, wv, wo, causal));
    constexpr auto n2 = layer_norm(h, weight_vector<"ln2_gamma", 512>(), weight_vector<"ln2_beta", 512>());
    constexpr auto cross = multi_head_attention<8, 8, "cross_attention">(
        n2, memory, weight<"cross_wq", 512, 512>(), weight<"cross_wk", 512, 512>(), weight<"cross_wv", 512, 512>(),
        weight<"cross_wo", 512, 512>(), key_padding(memory_padding));
    return make_graph<"decoder_layer">(add(h, cross));
}();

}  // namespace attnforge::dsl::variants
