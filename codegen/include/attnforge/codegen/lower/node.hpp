// Lower: Lower::node and the declaration of every Lower::impl overload (one per node kind, each
// defined in a lower/<kind>.hpp), so that a part can be included on its own and every overload is
// visible to every other whatever the order of the headers. codegen/lower.hpp includes all the parts.
#pragma once

#include <attnforge/codegen/lowering.hpp>
#include <attnforge/dsl.hpp>

namespace attnforge::codegen {

struct Lower {
    // Lowers a node once per graph: nodes with the same canonical text (a shared sub-graph, such as
    // the LayerNorm feeding Q, K and V) are the same Funcs.
    template <class Node>
    static Lowered node(const Node& n, LoweringContext& ctx) {
        const std::string key = dsl::canonical(n);
        if (auto it = ctx.lowered.find(key); it != ctx.lowered.end()) return it->second;
        Lowered result = impl(n, ctx);
        ctx.lowered.emplace(key, result);
        return result;
    }

    template <dsl::fixed_string Name, class Kind>
    static Lowered impl(const dsl::input_node<Name, Kind>&, LoweringContext&);
    template <class X, class W, class Bias>
    static Lowered impl(const dsl::linear_node<X, W, Bias>&, LoweringContext&);
    template <class X, int H>
    static Lowered impl(const dsl::split_heads_node<X, H>&, LoweringContext&);
    template <class X>
    static Lowered impl(const dsl::merge_heads_node<X>&, LoweringContext&);
    template <class S, dsl::fixed_string Label>
    static Lowered impl(const dsl::softmax_node<S, Label>&, LoweringContext&);
    template <class P, class V>
    static Lowered impl(const dsl::weighted_sum_node<P, V>&, LoweringContext&);
    template <class X, class G, class Bt>
    static Lowered impl(const dsl::layer_norm_node<X, G, Bt>&, LoweringContext&);
    template <class A, class B>
    static Lowered impl(const dsl::add_node<A, B>&, LoweringContext&);
    template <class X>
    static Lowered impl(const dsl::positional_encoding_node<X>&, LoweringContext&);
    template <class X, class P>
    static Lowered impl(const dsl::rope_node<X, P>&, LoweringContext&);
    template <class C, class S, class Z>
    static Lowered impl(const dsl::dequantize_node<C, S, Z>&, LoweringContext&);
    // Raw scores outside a softmax: a graph whose result is scores. Attention kernels compute outputs
    // or attention weights; this is refused when generating, with the node named.
    template <class Node>
    requires(dsl::is_a<Node, dsl::score_tag> || dsl::is_a<Node, dsl::mask_tag> ||
             dsl::is_a<Node, dsl::modify_tag>) static Lowered impl(const Node&, LoweringContext&);

    // Where an attention reads K and V (lower/kv_source.hpp): a source, and one overload per rows type.
    template <class Rows, class Valid>
    static KeyValueSource source(const dsl::kv_source<Rows, Valid>&, LoweringContext&);
    template <class Node>
    static KeyValueSource rows(const dsl::dense_rows<Node>&, LoweringContext&);
    template <class C, class S, class Z>
    static KeyValueSource rows(const dsl::quantized_rows<C, S, Z>&, LoweringContext&);

    // The attention pattern, whole (lower/attention.hpp).
    template <class Score, class Layers, class Values, dsl::fixed_string Label>
    static Lowered attention(const dsl::attention_pattern<Score, Layers, Values, Label>&, LoweringContext&);
};

}  // namespace attnforge::codegen
