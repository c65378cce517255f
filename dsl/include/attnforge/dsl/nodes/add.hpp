// add: elementwise sum of two tensors of the same kind; the residual connection y = x + f(x).
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class A, class B>
struct add_node {
    using tag = add_tag;
    A a;
    B b;
    using kind = typename A::kind;
    static constexpr auto label = cat("add(", A::label, ", ", B::label, ")");
    constexpr auto children() const { return hana::make_tuple(a, b); }
};

template <class A, class B>
constexpr auto add(A a, B b) {
    if constexpr (any_error_v<A, B>) {
        return error_node{};
    } else {
        constexpr auto node = cat("add(", A::label, ", ", B::label, ")");
        if constexpr (!diagnostic::expect<node, "activation (B, L, D)", is_activation, typename A::kind>() ||
                      !diagnostic::same_kind<node, A::kind::label, B::kind::label>::ok ||
                      !diagnostic::batching_matches<node, A::kind::batched, B::kind::batched>::ok) {
            return error_node{};
        } else {
            return add_node<A, B>{a, b};
        }
    }
}

}  // namespace attnforge::dsl
