// lower(graph, ctx): the one generic path from a DSL graph to Halide Funcs. Lower::node has one
// overload per node kind, each defined in lower/<kind>.hpp; they are members of one class so that
// every overload is visible to every other whatever the order of the headers.
#pragma once

#include <attnforge/codegen/lowering.hpp>
#include <attnforge/dsl.hpp>

namespace attnforge::codegen {

struct Lower {
    template <dsl::fixed_string Name, class Kind>
    static Lowered node(const dsl::input_node<Name, Kind>&, LoweringContext&);
    template <class X, class W, class Bias>
    static Lowered node(const dsl::linear_node<X, W, Bias>&, LoweringContext&);
    template <class X, int H>
    static Lowered node(const dsl::split_heads_node<X, H>&, LoweringContext&);
    template <class X>
    static Lowered node(const dsl::merge_heads_node<X>&, LoweringContext&);
    template <class Q, class K>
    static Lowered node(const dsl::score_node<Q, K>&, LoweringContext&);
    template <class S, class Spec>
    static Lowered node(const dsl::mask_node<S, Spec>&, LoweringContext&);
    template <class S, class E>
    static Lowered node(const dsl::modify_node<S, E>&, LoweringContext&);
    template <class S, dsl::fixed_string Label>
    static Lowered node(const dsl::softmax_node<S, Label>&, LoweringContext&);
    template <class P, class V>
    static Lowered node(const dsl::weighted_sum_node<P, V>&, LoweringContext&);
    template <class X, class G, class Bt>
    static Lowered node(const dsl::layer_norm_node<X, G, Bt>&, LoweringContext&);
    template <class A, class B>
    static Lowered node(const dsl::add_node<A, B>&, LoweringContext&);
    template <class X>
    static Lowered node(const dsl::positional_encoding_node<X>&, LoweringContext&);

    // softmax(S) as an attention core without its weighted sum (shared by softmax and weighted_sum).
    template <class S, dsl::fixed_string Label>
    static AttentionCore softmax_core(const dsl::softmax_node<S, Label>&, LoweringContext&);
};

}  // namespace attnforge::codegen

#include <attnforge/codegen/lower/attention.hpp>
#include <attnforge/codegen/lower/elementwise.hpp>
#include <attnforge/codegen/lower/heads.hpp>
#include <attnforge/codegen/lower/input.hpp>
#include <attnforge/codegen/lower/linear.hpp>
#include <attnforge/codegen/lower/masks.hpp>
