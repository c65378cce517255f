// rope: rotary position embedding (Su et al., RoFormer) of per-head queries or keys, (B, H, L, E), in
// the "rotate half" pairing of GPT-NeoX and LLaMA: column i pairs with column i + E/2 and the pair is
// rotated by the angle pos · θ_i, θ_i = base^(-2i/E), i < E/2:
//   out[i]       = x[i] · cos(pos·θ_i) − x[i + E/2] · sin(pos·θ_i)
//   out[i + E/2] = x[i + E/2] · cos(pos·θ_i) + x[i] · sin(pos·θ_i)
// rope(x): pos is the index in the sequence, from 0 for queries and keys alike (with Lq ≠ Lk query i is
// at position i, as causal's top-left alignment has it). Applied to both Q and K, the score of a pair
// depends on the keys' and queries' positions only through their distance.
// rope_in_cache(x, lengths): x holds the newest L tokens of a cache whose valid length is lengths[b]
// (a cache_lengths input, as kv_cache's): token l sits at position lengths[b] − L + l, the position
// kv_cache gives the queries of a decode step (docs/contract.md §1). Keys in a cache are stored rotated.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

// Where rope(x) rotates: at the sequence index.
struct at_index {};

template <class X, class Positions = at_index>
struct rope_node {
    using tag = rope_tag;
    X x;
    double base;
    Positions lengths;  // at_index, or the cache lengths input of rope_in_cache
    static constexpr bool at_cache_positions = !std::is_same_v<Positions, at_index>;
    using kind = typename X::kind;
    static constexpr auto label = [] {
        if constexpr (at_cache_positions)
            return cat("rope(", X::label, ", ", Positions::label, ")");
        else
            return cat("rope(", X::label, ")");
    }();
    constexpr auto children() const {
        if constexpr (at_cache_positions)
            return hana::make_tuple(x, lengths);
        else
            return hana::make_tuple(x);
    }
};

template <class T>
struct is_index_rope : std::false_type {};
template <class X>
struct is_index_rope<rope_node<X, at_index>> : std::true_type {};

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
            return rope_node<X>{x, base, {}};
        }
    }
}

template <class X, class Len>
constexpr auto rope_in_cache(X x, Len lengths, double base = 10000.0) {
    if constexpr (any_error_v<X>) {
        return error_node{};
    } else {
        constexpr auto node = cat("rope(", X::label, ", ", Len::label, ")");
        if constexpr (!diagnostic::expect<node, "heads (B, H, L, E)", is_heads, typename X::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::rope_even_head_width<node, X::kind::head_width>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::expect<node, "cache_lengths (B) int32", is_cache_lengths,
                                                 typename Len::kind>()) {
            return error_node{};
        } else {
            return rope_node<X, Len>{x, base, lengths};
        }
    }
}

}  // namespace attnforge::dsl
