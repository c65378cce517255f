// linear: X · W (+ bias), a projection multiplying on the right. (B, L, D_in) -> (B, L, D_out).
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

struct no_bias {};

template <class X, class W, class Bias = no_bias>
struct linear_node {
    using tag = linear_tag;
    X x;
    W w;
    Bias bias;
    using kind = activation_kind<X::kind::seq, W::kind::out_width, X::kind::batched>;
    static constexpr auto label = cat("linear(", X::label, ", ", W::label, ")");
    static constexpr bool has_bias = !std::is_same_v<Bias, no_bias>;
    constexpr auto children() const {
        if constexpr (has_bias)
            return hana::make_tuple(x, w, bias);
        else
            return hana::make_tuple(x, w);
    }
};

template <class X, class W, class Bias = no_bias>
constexpr auto linear(X x, W w, Bias bias = {}) {
    if constexpr (any_error_v<X, W, Bias>) {
        return error_node{};
    } else {
        constexpr auto node = cat("linear(", X::label, ", ", W::label, ")");
        if constexpr (!diagnostic::expect<node, "activation (B, L, D_in)", is_activation, typename X::kind>() ||
                      !diagnostic::expect<node, "weight (D_in, D_out)", is_weight, typename W::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::linear_inner_widths_match<node, X::kind::width, W::kind::in_width>::ok) {
            return error_node{};
        } else if constexpr (std::is_same_v<Bias, no_bias>) {
            return linear_node<X, W, Bias>{x, w, bias};
        } else if constexpr (!diagnostic::expect<node, "weight_vector (D_out)", is_weight_vector,
                                                 typename Bias::kind>() ||
                             !diagnostic::bias_width_matches<node, W::kind::out_width, Bias::kind::width>::ok) {
            return error_node{};
        } else {
            return linear_node<X, W, Bias>{x, w, bias};
        }
    }
}

}  // namespace attnforge::dsl
