// flop_count: the dense floating-point operation count of a graph at given sizes, counting the
// matrix products (2 per multiply-add): linear 2·B·L·D_in·D_out, score and weighted_sum
// 2·B·Hq·Lq·Lk·E each. Masks do not reduce it (a causal variant is counted dense, as benchmarks
// conventionally do); element-wise work is not counted.
#pragma once

#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/nodes/heads.hpp>
#include <attnforge/dsl/nodes/linear.hpp>
#include <attnforge/dsl/nodes/score.hpp>
#include <attnforge/dsl/nodes/weighted_sum.hpp>

#include <boost/hana/fold_left.hpp>

#include <functional>
#include <string_view>

namespace attnforge::dsl {

struct FlopSizes {
    double batch = 1;
    double heads = 1;                                // a run-time head count
    std::function<double(std::string_view)> length;  // by sequence tag
    double head_width = 64;                          // a run-time head width E
};

template <class Node>
double flop_count(const Node& node, const FlopSizes& s) {
    double own = 0;
    auto heads = [&](int h) { return h == runtime_heads ? s.heads : double(h); };
    auto width = [&](int e) { return e == runtime_head_width ? s.head_width : double(e); };
    if constexpr (is_a<Node, linear_tag>) {
        using X = std::remove_cvref_t<decltype(node.x)>;
        using W = std::remove_cvref_t<decltype(node.w)>;
        own = 2.0 * (X::kind::batched ? s.batch : 1.0) * s.length(X::kind::seq.view()) * W::kind::in_width *
              W::kind::out_width;
    } else if constexpr (is_a<Node, score_tag>) {
        using K = typename std::remove_cvref_t<decltype(node)>::kind;
        using Q = std::remove_cvref_t<decltype(node.q)>;
        own = 2.0 * (K::batched ? s.batch : 1.0) * heads(K::heads) * s.length(K::seq_q.view()) *
              s.length(K::seq_k.view()) * width(Q::kind::head_width);
    } else if constexpr (is_a<Node, weighted_sum_tag>) {
        using P = typename std::remove_cvref_t<decltype(node.probabilities)>::kind;
        using V = std::remove_cvref_t<decltype(node.v)>;
        own = 2.0 * (P::batched ? s.batch : 1.0) * heads(P::heads) * s.length(P::seq_q.view()) *
              s.length(P::seq_k.view()) * width(V::kind::head_width);
    }
    if constexpr (!is_a<Node, input_tag>) {
        return hana::fold_left(node.children(), own,
                               [&](double acc, const auto& child) { return acc + flop_count(child, s); });
    } else {
        return own;
    }
}

template <fixed_string Name, class Output>
double flop_count(const graph<Name, Output>& g, const FlopSizes& s) {
    return flop_count(g.output, s);
}

}  // namespace attnforge::dsl
