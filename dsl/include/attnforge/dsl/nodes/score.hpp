// score: S = Q · Kᵀ · scale, per (batch, query head). (B, Hq, Lq, E) x (B, Hkv, Lk, E) -> (B, Hq, Lq, Lk).
// Query head h reads key head ⌊h / (Hq/Hkv)⌋ (GQA/MQA). The default scale is 1/√E.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

#include <cmath>
#include <type_traits>

namespace attnforge::dsl {

// The scale of a score without a scale input: a number fixed with the graph (score_node::scale).
struct constant_scale {};

template <class Q, class K, class S = constant_scale>
struct score_node {
    using tag = score_tag;
    Q q;
    K k;
    double scale;   // 0 means the default, 1/√E (a score with a scale input: unused)
    S scale_input;  // a scale_input() read at run time, or constant_scale
    static constexpr bool runtime_scale = !std::is_same_v<S, constant_scale>;
    using kind = scores_kind<Q::kind::seq, K::kind::seq, Q::kind::heads, Q::kind::batched, false>;
    static constexpr auto label = cat("score(", Q::label, ", ", K::label, ")");
    static constexpr int head_width = Q::kind::head_width;  // runtime_head_width: the call's
    // The scale given, or 1/√E; where E is run-time, of the width the call (or the kernel) has. A score with a scale
    // input has its scale at run time (its input's value, 1/√E where the call gives none).
    double effective_scale(double width = head_width) const { return scale != 0 ? scale : 1.0 / std::sqrt(width); }
    constexpr auto children() const {
        if constexpr (runtime_scale)
            return hana::make_tuple(q, k, scale_input);
        else
            return hana::make_tuple(q, k);
    }
};

namespace detail {
template <class Q, class K>
constexpr bool scores_ok() {
    constexpr auto node = cat("score(", Q::label, ", ", K::label, ")");
    if constexpr (!diagnostic::expect<node, "heads (B, Hq, Lq, E)", is_heads, typename Q::kind>() ||
                  !diagnostic::expect<node, "heads (B, Hkv, Lk, E)", is_heads, typename K::kind>())
        return false;
    else
        return diagnostic::batching_matches<node, Q::kind::batched, K::kind::batched>::ok &&
               diagnostic::score_head_widths_match<node, Q::kind::head_width, K::kind::head_width>::ok &&
               diagnostic::heads_Hq_multiple_of_Hkv<node, Q::kind::heads, K::kind::heads>::ok;
}
}  // namespace detail

template <class Q, class K>
constexpr auto score(Q q, K k, double scale = 0) {
    if constexpr (any_error_v<Q, K>) {
        return error_node{};
    } else if constexpr (!detail::scores_ok<Q, K>()) {
        return error_node{};
    } else {
        return score_node<Q, K>{q, k, scale, {}};
    }
}

// S = Q·Kᵀ · s, s a scale_input(): the scale a call gives (1/√E where it gives none).
template <class Q, class K, class S>
requires is_input<S>::value && is_scale<typename S::kind>::value constexpr auto score(Q q, K k, S s) {
    if constexpr (any_error_v<Q, K>) {
        return error_node{};
    } else if constexpr (!detail::scores_ok<Q, K>()) {
        return error_node{};
    } else {
        constexpr auto node = cat("score(", Q::label, ", ", K::label, ", ", S::label, ")");
        if constexpr (!diagnostic::scale_of_the_head_width<node, Q::kind::head_width, S::kind::width>::ok)
            return error_node{};
        else
            return score_node<Q, K, S>{q, k, 0, s};
    }
}

}  // namespace attnforge::dsl
