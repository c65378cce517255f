// has_projection(graph): whether a graph computes a projection (a linear node) anywhere. A bf16 kernel of such a
// graph rounds the projections' results and computed inputs to bf16 (docs/storage_types.md), and is held to
// docs/contract.md §5's bound with the term for rounded operands.
#pragma once

#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/nodes/linear.hpp>

#include <boost/hana/fold_left.hpp>

namespace attnforge::dsl {

template <class Node>
constexpr bool has_projection(const Node& node) {
    if constexpr (is_a<Node, linear_tag>)
        return true;
    else if constexpr (is_a<Node, input_tag>)
        return false;
    else
        return hana::fold_left(node.children(), false,
                               [](bool found, const auto& child) { return found || has_projection(child); });
}

template <fixed_string Name, class Output>
constexpr bool has_projection(const graph<Name, Output>& g) {
    return has_projection(g.output);
}

}  // namespace attnforge::dsl
