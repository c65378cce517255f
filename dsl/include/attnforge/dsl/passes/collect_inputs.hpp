// collect_inputs: every distinct input of a graph, in depth-first order of first use (children left to
// right). The order is the graph's input order: in `attnforge list`, in kernel signatures.
// An input name used twice with different kinds stops the build (diagnostic::input_declared_once).
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/nodes/input.hpp>

#include <boost/hana/any_of.hpp>
#include <boost/hana/append.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

namespace attnforge::dsl {

namespace detail {

struct append_unique_input {
    template <class Acc, class In>
    constexpr auto operator()(Acc acc, In in) const {
        constexpr bool seen =
            decltype(hana::any_of(acc, [](auto a) { return hana::bool_c<decltype(a)::name == In::name>; }))::value;
        if constexpr (seen) {
            hana::for_each(acc, [](auto a) {
                using A = decltype(a);
                if constexpr (A::name == In::name)
                    (void)diagnostic::input_declared_once<In::name, A::kind::label, In::kind::label>::ok;
            });
            return acc;
        } else {
            return hana::append(acc, in);
        }
    }
};

}  // namespace detail

template <class Node>
constexpr auto collect_inputs(const Node& node) {
    if constexpr (is_input<Node>::value) {
        return hana::make_tuple(node);
    } else {
        return hana::fold_left(node.children(), hana::make_tuple(), [](auto acc, auto child) {
            return hana::fold_left(collect_inputs(child), acc, detail::append_unique_input{});
        });
    }
}

template <fixed_string Name, class Output>
constexpr auto collect_inputs(const graph<Name, Output>& g) {
    return collect_inputs(g.output);
}

}  // namespace attnforge::dsl
