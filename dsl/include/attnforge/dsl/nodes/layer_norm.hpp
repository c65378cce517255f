// layer_norm: (x - mean) / sqrt(var + eps) · gamma + beta over the last axis, biased variance,
// eps = 1e-5 unless given (docs/contract.md §1).
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class X, class G, class Bt>
struct layer_norm_node {
    using tag = layer_norm_tag;
    X x;
    G gamma;
    Bt beta;
    double eps;
    using kind = typename X::kind;
    static constexpr auto label = cat("layer_norm(", X::label, ", ", G::label, ", ", Bt::label, ")");
    constexpr auto children() const { return hana::make_tuple(x, gamma, beta); }
};

template <class X, class G, class Bt>
constexpr auto layer_norm(X x, G gamma, Bt beta, double eps = 1e-5) {
    if constexpr (any_error_v<X, G, Bt>) {
        return error_node{};
    } else {
        constexpr auto node = cat("layer_norm(", X::label, ", ", G::label, ", ", Bt::label, ")");
        if constexpr (!diagnostic::expect<node, "activation (B, L, D)", is_activation, typename X::kind>() ||
                      !diagnostic::expect<node, "weight_vector (D)", is_weight_vector, typename G::kind>() ||
                      !diagnostic::expect<node, "weight_vector (D)", is_weight_vector, typename Bt::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::norm_widths_match<node, X::kind::width, G::kind::width>::ok ||
                             !diagnostic::norm_widths_match<node, X::kind::width, Bt::kind::width>::ok) {
            return error_node{};
        } else {
            return layer_norm_node<X, G, Bt>{x, gamma, beta, eps};
        }
    }
}

}  // namespace attnforge::dsl
