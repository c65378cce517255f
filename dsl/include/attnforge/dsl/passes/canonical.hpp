// canonical: the canonical text of a node or graph: its structure (the node labels) with every
// constant that changes its value (scales, eps, predicate and modifier expressions, softmax labels).
// Two nodes with the same canonical text compute the same tensor; code generators use it to lower a
// shared sub-graph once, tuning records to key a variant by what it computes.
#pragma once

#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/nodes/add.hpp>
#include <attnforge/dsl/nodes/heads.hpp>
#include <attnforge/dsl/nodes/input.hpp>
#include <attnforge/dsl/nodes/layer_norm.hpp>
#include <attnforge/dsl/nodes/linear.hpp>
#include <attnforge/dsl/nodes/mask.hpp>
#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/nodes/positional_encoding.hpp>
#include <attnforge/dsl/nodes/rope.hpp>
#include <attnforge/dsl/nodes/score.hpp>
#include <attnforge/dsl/nodes/softmax.hpp>
#include <attnforge/dsl/nodes/weighted_sum.hpp>

#include <boost/hana/fold_left.hpp>

#include <cstdio>
#include <string>

namespace attnforge::dsl {

namespace detail {
inline std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
inline std::string call(std::string_view name, const std::string& args) {
    return std::string(name) + "(" + args + ")";
}
}  // namespace detail

template <class Node>
std::string canonical(const Node& n) {
    std::string args;
    if constexpr (is_a<Node, input_tag>) {
        return std::string(Node::name.view()) + ":" + std::string(Node::kind::label.view());
    } else {
        hana::fold_left(n.children(), 0, [&](int i, const auto& child) {
            args += (i ? ", " : "") + canonical(child);
            return i + 1;
        });
    }
    if constexpr (is_a<Node, score_tag>) {
        if constexpr (std::decay_t<decltype(n)>::runtime_scale) return detail::call("score", args);  // its input
        if (n.scale == 0 && n.head_width == runtime_head_width)
            return detail::call("score", args + ", scale=1/sqrt(E)");
        return detail::call("score", args + ", scale=" + detail::number(n.effective_scale()));
    } else if constexpr (is_a<Node, mask_tag>) {
        std::string spec(decltype(n.spec)::label.view());
        if constexpr (is_predicate_spec<decltype(n.spec)>) spec += "[" + ex::to_string(n.spec.expr) + "]";
        return detail::call("mask", args + ", " + spec);
    } else if constexpr (is_a<Node, modify_tag>) {
        return detail::call("modify", args + ", " + ex::to_string(n.expr));
    } else if constexpr (is_a<Node, rope_tag>) {
        return detail::call("rope", args + ", base=" + detail::number(n.base));
    } else if constexpr (is_a<Node, layer_norm_tag>) {
        return detail::call("layer_norm", args + ", eps=" + detail::number(n.eps));
    } else if constexpr (is_a<Node, softmax_tag>) {
        return detail::call("softmax", args + ", label=" + std::string(Node::name.view()));
    } else {
        // The label's head names the node kind: "linear(", "split_heads(", "merge_heads(", ...
        const std::string_view label = Node::label.view();
        std::string kind(label.substr(0, label.find('(')));
        if constexpr (is_a<Node, split_heads_tag>) kind += "<" + std::to_string(Node::kind::heads) + ">";
        return detail::call(kind, args);
    }
}

template <fixed_string Name, class Output>
std::string canonical(const graph<Name, Output>& g) {
    return std::string(Name.view()) + " = " + canonical(g.output);
}

}  // namespace attnforge::dsl
