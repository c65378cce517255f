// positional_encoding: x + PE with the sinusoidal encoding of "Attention Is All You Need" (seed 001 §4):
// PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D)); pos is the index in
// the sequence, the same for every batch entry.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class X>
struct positional_encoding_node {
    using tag = positional_encoding_tag;
    X x;
    using kind = typename X::kind;
    static constexpr auto label = cat("positional_encoding(", X::label, ")");
    constexpr auto children() const { return hana::make_tuple(x); }
};

template <class X>
constexpr auto positional_encoding(X x) {
    if constexpr (any_error_v<X>) {
        return error_node{};
    } else {
        constexpr auto node = cat("positional_encoding(", X::label, ")");
        if constexpr (!diagnostic::expect<node, "activation (B, L, D)", is_activation, typename X::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::positional_encoding_even_width<node, X::kind::width>::ok) {
            return error_node{};
        } else {
            return positional_encoding_node<X>{x};
        }
    }
}

}  // namespace attnforge::dsl
