// Lower::node(node, ctx): the one generic path from a DSL graph to Halide Funcs. Lower::impl has one
// overload per node kind, each defined in lower/<kind>.hpp; they are members of one class so that
// every overload is visible to every other whatever the order of the headers.
#pragma once

#include <attnforge/codegen/lowering.hpp>
#include <attnforge/dsl.hpp>

namespace attnforge::codegen {

struct Lower {
    // Lowers a node once per graph: nodes with the same canonical text (a shared sub-graph, such as
    // the LayerNorm feeding Q, K and V) are the same Funcs.
    template <class Node>
    static Lowered node(const Node& n, LoweringContext& ctx) {
        const std::string key = dsl::canonical(n) + ctx.memo_suffix();
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
    template <class Q, class K>
    static Lowered impl(const dsl::score_node<Q, K>&, LoweringContext&);
    template <class S, class Spec>
    static Lowered impl(const dsl::mask_node<S, Spec>&, LoweringContext&);
    template <class S, class E>
    static Lowered impl(const dsl::modify_node<S, E>&, LoweringContext&);
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
    template <class X>
    static Lowered impl(const dsl::rope_node<X>&, LoweringContext&);

    // softmax(S) as an attention core without its weighted sum (shared by softmax and weighted_sum).
    // `band_only`: only keys inside the band are ever read (a weighted sum restricted to it), so exps
    // outside need no value at all.
    template <class S, dsl::fixed_string Label>
    static AttentionCore softmax_core(const dsl::softmax_node<S, Label>&, LoweringContext&, bool band_only);
};

}  // namespace attnforge::codegen

#include <attnforge/codegen/lower/attention.hpp>
#include <attnforge/codegen/lower/elementwise.hpp>
#include <attnforge/codegen/lower/heads.hpp>
#include <attnforge/codegen/lower/input.hpp>
#include <attnforge/codegen/lower/linear.hpp>
#include <attnforge/codegen/lower/masks.hpp>
