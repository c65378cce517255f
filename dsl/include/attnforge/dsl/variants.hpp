// The built-in variants (CONTRACT §2), each defined once, here, in the DSL. Kernels, the interpreter,
// the CLI and the tests all reach them through `builtin_variants`.
#pragma once

#include <attnforge/dsl/attention.hpp>
#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/nodes/add.hpp>
#include <attnforge/dsl/nodes/layer_norm.hpp>
#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/nodes/positional_encoding.hpp>

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include <string_view>

namespace attnforge::dsl::variants {

// Seed 004: one sequence x (L, 4), single head of width 3, no output projection.
inline constexpr auto seed_attention = [] {
    constexpr auto x = unbatched_activation<"x", 4>();
    constexpr auto q = split_heads<1>(linear(x, weight<"wq", 4, 3>()));
    constexpr auto k = split_heads<1>(linear(x, weight<"wk", 4, 3>()));
    constexpr auto v = split_heads<1>(linear(x, weight<"wv", 4, 3>()));
    return make_graph<"seed_attention">(merge_heads(attention(q, k, v)));
}();

// Scaled dot-product attention on given heads: q (B, H, Lq, 64), k and v (B, H, Lk, 64), H at run time.
inline constexpr auto sdpa_q = heads_input<"q", 64>();
inline constexpr auto sdpa_k = heads_input<"k", 64, "kv">();
inline constexpr auto sdpa_v = heads_input<"v", 64, "kv">();
inline constexpr auto sdpa = make_graph<"sdpa">(attention(sdpa_q, sdpa_k, sdpa_v));
inline constexpr auto sdpa_causal = make_graph<"sdpa_causal">(attention(sdpa_q, sdpa_k, sdpa_v, causal));

// The seed-002 configuration: D = 512, Hq = Hkv = 8, E = 64, no biases.
inline constexpr auto x512 = activation<"x", 512>();
inline constexpr auto wq = weight<"wq", 512, 512>();
inline constexpr auto wk = weight<"wk", 512, 512>();
inline constexpr auto wv = weight<"wv", 512, 512>();
inline constexpr auto wo = weight<"wo", 512, 512>();

inline constexpr auto mha = make_graph<"mha">(multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo));
inline constexpr auto mha_causal =
    make_graph<"mha_causal">(multi_head_attention<8, 8>(x512, x512, wq, wk, wv, wo, causal));
inline constexpr auto mha_padding = make_graph<"mha_padding">(multi_head_attention<8, 8>(
    x512, x512, wq, wk, wv, wo, key_padding(key_padding_mask<"key_padding_mask", "x">())));

// Queries from x (Lq), keys and values from memory (Lk).
inline constexpr auto cross_attention = make_graph<"cross_attention">(
    multi_head_attention<8, 8>(x512, activation<"memory", 512>(), wq, wk, wv, wo));

// Grouped-query attention: 8 query heads share 2 key/value heads of width 64.
inline constexpr auto gqa = make_graph<"gqa">(multi_head_attention<8, 2>(
    x512, x512, wq, weight<"wk", 512, 128>(), weight<"wv", 512, 128>(), wo));

// Pre-LN self-attention layer: y = x + MHA(LayerNorm(x)).
inline constexpr auto self_attention_layer = [] {
    constexpr auto h = layer_norm(x512, weight_vector<"gamma", 512>(), weight_vector<"beta", 512>());
    return make_graph<"self_attention_layer">(add(x512, multi_head_attention<8, 8>(h, h, wq, wk, wv, wo)));
}();

// ---- demonstrations beyond CONTRACT §2 ----------------------------------------------------------

// Sliding-window attention: a predicate mask of (q_idx, kv_idx); each query sees itself and 128 keys back.
inline constexpr auto sliding_window_attention =
    make_graph<"sliding_window_attention">(attention(sdpa_q, sdpa_k, sdpa_v, sliding_window(128)));

// ALiBi: a score modifier of (score, h, q_idx, kv_idx) over 8 static heads.
inline constexpr auto alibi_attention = [] {
    constexpr auto q = heads_input<"q", 64, "q", 8>();
    constexpr auto k = heads_input<"k", 64, "kv", 8>();
    constexpr auto v = heads_input<"v", 64, "kv", 8>();
    return make_graph<"alibi_attention">(weighted_sum(softmax(modify(score(q, k), alibi<8>())), v));
}();

// Soft-capped scores (cap 20), as in Gemma 2, then causal.
inline constexpr auto softcap_attention = make_graph<"softcap_attention">(
    weighted_sum(softmax(mask(modify(score(sdpa_q, sdpa_k), soft_cap(20.0)), causal)), sdpa_v));

// A boolean attention-mask input (B, Lq, Lk): true means the pair takes part.
inline constexpr auto masked_attention = make_graph<"masked_attention">(
    attention(sdpa_q, sdpa_k, sdpa_v, boolean_mask(attention_mask<"attn_mask", "q", "kv">())));

// Encoder-style layer with sinusoidal positions: h = x + PE; y = h + MHA(LayerNorm(h)).
inline constexpr auto positional_self_attention_layer = [] {
    constexpr auto h = positional_encoding(x512);
    constexpr auto n = layer_norm(h, weight_vector<"gamma", 512>(), weight_vector<"beta", 512>());
    return make_graph<"positional_self_attention_layer">(add(h, multi_head_attention<8, 8>(n, n, wq, wk, wv, wo)));
}();

}  // namespace attnforge::dsl::variants

namespace attnforge::dsl {

// Every built-in variant, in one list.
inline constexpr auto builtin_variants = hana::make_tuple(
    variants::seed_attention, variants::sdpa, variants::sdpa_causal, variants::mha, variants::mha_causal,
    variants::mha_padding, variants::cross_attention, variants::gqa, variants::self_attention_layer,
    variants::sliding_window_attention, variants::alibi_attention, variants::softcap_attention,
    variants::masked_attention, variants::positional_self_attention_layer);

}  // namespace attnforge::dsl

namespace attnforge::dsl {

// Calls f(graph) for the built-in variant called `name`; returns false when there is none.
template <class F>
bool with_builtin_variant(std::string_view name, F&& f) {
    bool found = false;
    hana::for_each(builtin_variants, [&](const auto& g) {
        if (!found && g.name.view() == name) {
            found = true;
            f(g);
        }
    });
    return found;
}

}  // namespace attnforge::dsl
