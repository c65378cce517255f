// score: S = Q · Kᵀ · scale, per (batch, query head). (B, Hq, Lq, E) x (B, Hkv, Lk, E) -> (B, Hq, Lq, Lk).
// Query head h reads key head ⌊h / (Hq/Hkv)⌋ (GQA/MQA). The default scale is 1/√E.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

#include <cmath>

namespace attnforge::dsl {

template <class Q, class K>
struct score_node {
    using tag = score_tag;
    Q q;
    K k;
    double scale;  // 0 means the default, 1/√E
    using kind = scores_kind<Q::kind::seq, K::kind::seq, Q::kind::heads, Q::kind::batched, false>;
    static constexpr auto label = cat("score(", Q::label, ", ", K::label, ")");
    static constexpr int head_width = Q::kind::head_width;  // runtime_head_width: the call's
    // The scale given, or 1/√E; where E is run-time, of the width the call (or the kernel) has.
    double effective_scale(double width = head_width) const { return scale != 0 ? scale : 1.0 / std::sqrt(width); }
    constexpr auto children() const { return hana::make_tuple(q, k); }
};

template <class Q, class K>
constexpr auto score(Q q, K k, double scale = 0) {
    if constexpr (any_error_v<Q, K>) {
        return error_node{};
    } else {
        constexpr auto node = cat("score(", Q::label, ", ", K::label, ")");
        if constexpr (!diagnostic::expect<node, "heads (B, Hq, Lq, E)", is_heads, typename Q::kind>() ||
                      !diagnostic::expect<node, "heads (B, Hkv, Lk, E)", is_heads, typename K::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::batching_matches<node, Q::kind::batched, K::kind::batched>::ok ||
                             !diagnostic::score_head_widths_match<node, Q::kind::head_width, K::kind::head_width>::ok ||
                             !diagnostic::heads_Hq_multiple_of_Hkv<node, Q::kind::heads, K::kind::heads>::ok) {
            return error_node{};
        } else {
            return score_node<Q, K>{q, k, scale};
        }
    }
}

}  // namespace attnforge::dsl
