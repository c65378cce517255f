// modify: a score modifier, an elementwise function of the score and the indices applied before the
// softmax (ALiBi, relative-position bias, soft-capping). fn(score, b, h, q_idx, kv_idx) is called once
// with placeholders and its body captured. A masked score (-inf) stays masked whatever fn does.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/expr.hpp>
#include <attnforge/dsl/nodes/input.hpp>

#include <boost/hana/concat.hpp>

namespace attnforge::dsl {

template <class S, class Expr>
struct modify_node {
    using tag = modify_tag;
    S scores;
    Expr expr;
    using kind = typename S::kind;
    static constexpr auto label = cat("modify(", S::label, ")");
    constexpr auto children() const { return hana::concat(hana::make_tuple(scores), ex::inputs_read(expr)); }
};

template <class S, class Fn>
constexpr auto modify(S s, Fn fn) {
    if constexpr (any_error_v<S>) {
        return error_node{};
    } else {
        using namespace ex;
        auto e = as_expr(fn(score_placeholder, b_placeholder, h_placeholder, q_idx_placeholder, kv_idx_placeholder));
        using E = decltype(e);
        constexpr auto node = cat("modify(", S::label, ")");
        using SK = typename S::kind;
        if constexpr (!diagnostic::expect<node, "scores (B, H, Lq, Lk)", is_scores, SK>()) {
            return error_node{};
        } else if constexpr (!diagnostic::expression_rule<node, "score modifiers apply before softmax",
                                                          !SK::probabilities>::ok ||
                                 !diagnostic::expression_rule < node,
                             "a score modifier must be real-valued",
                             checks<E>::typed && E::type == value_type::real > ::ok) {
            return error_node{};
        } else {
            return modify_node<S, E>{s, e};
        }
    }
}

// ALiBi (Press et al.): score - slope_h · |q_idx - kv_idx| with slope_h = 2^(-8 (h+1) / H).
template <int H>
constexpr auto alibi() {
    return [](auto score, auto, auto h, auto q_idx, auto kv_idx) {
        return score - ex::exp2((h + 1) * (-8.0 / H)) * ex::abs(q_idx - kv_idx);
    };
}

// ALiBi with the slopes an input holds (alibi_slopes(): a call's own, or the default ones for its H):
// score − slopes(h) · |q_idx − kv_idx|.
template <class Slopes>
requires is_input<Slopes>::value constexpr auto alibi(Slopes slopes) {
    return [slopes](auto score, auto, auto h, auto q_idx, auto kv_idx) {
        return score - slopes(h) * ex::abs(q_idx - kv_idx);
    };
}

// Soft-capping (Gemma 2): cap · tanh(score / cap), the cap a number or a run-time input (a scalar_value, cap()).
constexpr auto soft_cap(double cap) {
    return [cap](auto score, auto, auto, auto, auto) { return ex::tanh(score / cap) * cap; };
}
// With a run-time cap the division is a product by its reciprocal, one per call: a division per score costs
// a divider's throughput (the constant cap's division is folded into a product when generating).
template <class Cap>
requires is_input<Cap>::value constexpr auto soft_cap(Cap cap) {
    return [cap](auto score, auto, auto, auto, auto) { return ex::tanh(score * (1.0 / cap())) * cap(); };
}

}  // namespace attnforge::dsl
