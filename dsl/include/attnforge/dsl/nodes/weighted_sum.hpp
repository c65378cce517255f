// weighted_sum: O = P · V per (batch, query head). (B, Hq, Lq, Lk) x (B, Hkv, Lk, E) -> (B, Hq, Lq, E);
// query head h reads value head ⌊h / (Hq/Hkv)⌋. P must be a softmax (the attention pattern every back end
// lowers as one unit); anything else is a one-line diagnostic.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class P, class V>
struct weighted_sum_node {
    using tag = weighted_sum_tag;
    P probabilities;
    V v;
    using kind = heads_kind<P::kind::seq_q, P::kind::heads, V::kind::head_width, P::kind::batched>;
    static constexpr auto label = cat("weighted_sum(", P::label, ", ", V::label, ")");
    constexpr auto children() const { return hana::make_tuple(probabilities, v); }
};

template <class P, class V>
constexpr auto weighted_sum(P p, V v) {
    if constexpr (any_error_v<P, V>) {
        return error_node{};
    } else {
        constexpr auto node = cat("weighted_sum(", P::label, ", ", V::label, ")");
        if constexpr (!diagnostic::expect<node, "scores (B, Hq, Lq, Lk)", is_scores, typename P::kind>() ||
                      !diagnostic::expect<node, "heads (B, Hkv, Lk, E)", is_heads, typename V::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::weighted_sum_of_softmax<node, P::label, is_a<P, softmax_tag>>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::batching_matches<node, P::kind::batched, V::kind::batched>::ok ||
                             !diagnostic::values_run_over_keys<node, V::kind::seq, P::kind::seq_k>::ok ||
                             !diagnostic::heads_Hq_multiple_of_Hkv<node, P::kind::heads, V::kind::heads>::ok) {
            return error_node{};
        } else {
            return weighted_sum_node<P, V>{p, v};
        }
    }
}

}  // namespace attnforge::dsl
