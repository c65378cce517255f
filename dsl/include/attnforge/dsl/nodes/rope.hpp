// rope: rotary position embedding (Su et al., RoFormer) of per-head queries or keys, (B, H, L, E), in
// the "rotate half" pairing of GPT-NeoX and LLaMA: column i pairs with column i + E/2 and the pair is
// rotated by the angle pos · θ_i, θ_i = base^(-2i/E), i < E/2:
//   out[i]       = x[i] · cos(pos·θ_i) − x[i + E/2] · sin(pos·θ_i)
//   out[i + E/2] = x[i + E/2] · cos(pos·θ_i) + x[i] · sin(pos·θ_i)
// pos is the index in the sequence, from 0 for queries and keys alike (no decoding offset: with Lq ≠ Lk
// query i is at position i, as causal's top-left alignment has it). Applied to both Q and K, the score
// of a pair depends on the keys' and queries' positions only through their distance.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class X>
struct rope_node {
    using tag = rope_tag;
    X x;
    double base;
    using kind = typename X::kind;
    static constexpr auto label = cat("rope(", X::label, ")");
    constexpr auto children() const { return hana::make_tuple(x); }
};

template <class X>
constexpr auto rope(X x, double base = 10000.0) {
    if constexpr (any_error_v<X>) {
        return error_node{};
    } else {
        constexpr auto node = cat("rope(", X::label, ")");
        if constexpr (!diagnostic::expect<node, "heads (B, H, L, E)", is_heads, typename X::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::rope_even_head_width<node, X::kind::head_width>::ok) {
            return error_node{};
        } else {
            return rope_node<X>{x, base};
        }
    }
}

}  // namespace attnforge::dsl
