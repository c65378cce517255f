// find_softmax<"label">(node): the softmax node with that label in a graph, as a hana::optional
// (hana::nothing when there is none). Used to expose a variant's attention weights as an output.
#pragma once

#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/nodes/softmax.hpp>

#include <boost/hana/fold_left.hpp>
#include <boost/hana/optional.hpp>

namespace attnforge::dsl {

template <fixed_string Label, class Node>
constexpr auto find_softmax(const Node& node) {
    if constexpr (is_a<Node, softmax_tag>) {
        if constexpr (Node::name == Label)
            return hana::just(node);
        else
            return find_softmax<Label>(node.scores);
    } else if constexpr (is_a<Node, input_tag>) {
        return hana::nothing;
    } else {
        return hana::fold_left(node.children(), hana::nothing, [](auto found, auto child) {
            if constexpr (decltype(hana::is_just(found))::value)
                return found;
            else
                return find_softmax<Label>(child);
        });
    }
}

template <fixed_string Label, fixed_string Name, class Output>
constexpr auto find_softmax(const graph<Name, Output>& g) {
    return find_softmax<Label>(g.output);
}

}  // namespace attnforge::dsl
