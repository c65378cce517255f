// softmax over the key axis, with the row max subtracted. Reports two named intermediates:
// "<Label>_weights" (B, H, Lq, Lk) and "<Label>_logsumexp" (B, H, Lq); fully masked rows give zero
// weights and logsumexp -inf. Give each softmax of a graph its own Label.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class S, fixed_string Label>
struct softmax_node {
    using tag = softmax_tag;
    S scores;
    using kind = scores_kind<S::kind::seq_q, S::kind::seq_k, S::kind::heads, S::kind::batched, true>;
    static constexpr auto name = Label;
    static constexpr auto label = cat("softmax(", S::label, ")");
    constexpr auto children() const { return hana::make_tuple(scores); }
};

template <fixed_string Label = "attention", class S>
constexpr auto softmax(S s) {
    if constexpr (any_error_v<S>) {
        return error_node{};
    } else {
        constexpr auto node = cat("softmax(", S::label, ")");
        if constexpr (!diagnostic::expect<node, "scores (B, H, Lq, Lk)", is_scores, typename S::kind>()) {
            return error_node{};
        } else if constexpr (!diagnostic::softmax_of_raw_scores<node, !S::kind::probabilities>::ok) {
            return error_node{};
        } else {
            return softmax_node<S, Label>{s};
        }
    }
}

}  // namespace attnforge::dsl
