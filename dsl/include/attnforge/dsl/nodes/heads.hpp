// split_heads / merge_heads: heads are contiguous column blocks (docs/contract.md §1). Head h of a width-D
// activation is columns [h·E, (h+1)·E), E = D / H.
//   split_heads<H>: (B, L, D) -> (B, H, L, D/H)        merge_heads: (B, H, L, E) -> (B, L, H·E)
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class X, int H>
struct split_heads_node {
    using tag = split_heads_tag;
    X x;
    using kind = heads_kind<X::kind::seq, H, X::kind::width / H, X::kind::batched>;
    static constexpr auto label = cat("split_heads(", X::label, ", H=", int_string<H>(), ")");
    constexpr auto children() const { return hana::make_tuple(x); }
};

template <int H, class X>
constexpr auto split_heads(X x) {
    if constexpr (any_error_v<X>) {
        return error_node{};
    } else {
        constexpr auto node = cat("split_heads(", X::label, ", H=", int_string<H>(), ")");
        if constexpr (!diagnostic::expect<node, "activation (B, L, D)", is_activation, typename X::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::split_heads_D_divisible_by_Hq<node, X::kind::width, H>::ok) {
            return error_node{};
        } else {
            return split_heads_node<X, H>{x};
        }
    }
}

template <class X>
struct merge_heads_node {
    using tag = merge_heads_tag;
    X x;
    using kind = activation_kind<X::kind::seq, X::kind::heads * X::kind::head_width, X::kind::batched>;
    static constexpr auto label = cat("merge_heads(", X::label, ")");
    constexpr auto children() const { return hana::make_tuple(x); }
};

template <class X>
constexpr auto merge_heads(X x) {
    if constexpr (any_error_v<X>) {
        return error_node{};
    } else {
        constexpr auto node = cat("merge_heads(", X::label, ")");
        if constexpr (!diagnostic::expect<node, "heads (B, H, L, E)", is_heads, typename X::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::static_head_count<node, X::kind::heads>::ok ||
                             !diagnostic::static_head_width<node, X::kind::head_width>::ok) {
            return error_node{};
        } else {
            return merge_heads_node<X>{x};
        }
    }
}

}  // namespace attnforge::dsl
