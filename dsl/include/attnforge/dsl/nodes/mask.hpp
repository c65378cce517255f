// mask: removes (query, key) pairs from the attention. A masked score becomes -inf, stays -inf through
// any later score modifier, and gets weight exactly 0; a row with every key masked gives zero weights
// and a zero output row (docs/contract.md §1). Mask kinds:
//   causal                query i sees keys j <= i. For Lq != Lk the alignment is top-left: query i
//                         sees keys 0..i, as torch.tril(ones(Lq, Lk)) and SDPA's is_causal.
//   key_padding(m)        m (B, Lk) bool, true = padded key, ignored (PyTorch's convention)
//   boolean_mask(m)       m (B, Lq, Lk) bool, true = the pair takes part; or m (B or 1, H or 1, Lq, Lk) bool,
//                         PyTorch's boolean attn_mask, broadcast over a batch or head axis of size 1
//   additive_mask(m)      m (B or 1, H or 1, Lq, Lk) float, PyTorch's float attn_mask: added to the scaled scores,
//                         −inf removes the pair (it is a mask for the pairs it removes, a modifier for the rest)
//   predicate(fn)         fn(b, h, q_idx, kv_idx) -> boolean expression, true = the pair takes part;
//                         it may read inputs (document ids, prefix lengths: see expr.hpp)
//   kv_cache(len)         the keys are a cache (decoding): len (B) int32, cache_lengths of the key
//                         sequence; keys j >= len[b] take no part, and the Lq queries are the newest
//                         tokens: query i sits at position len[b] − Lq + i (FlashAttention's convention).
//                         Every other layer of the attention sees that position as q_idx: causal is then
//                         bottom-right aligned, and sliding windows, ALiBi and relative biases measure
//                         distances between positions (docs/contract.md §1).
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/expr.hpp>
#include <attnforge/dsl/nodes/input.hpp>

#include <boost/hana/concat.hpp>

#include <string_view>

namespace attnforge::dsl {

struct causal_mask {
    using tag = causal_spec_tag;
    static constexpr auto label = fixed_string("causal");
    constexpr auto children() const { return hana::make_tuple(); }
};
inline constexpr causal_mask causal{};

// A mask over one mask input M (key padding, boolean, additive): its tag says how back ends read the input.
template <class Tag, fixed_string Name, class M>
struct input_mask_spec {
    using tag = Tag;
    M mask;
    static constexpr auto name = Name;
    static constexpr auto label = cat(Name, "(", M::label, ")");
    constexpr auto children() const { return hana::make_tuple(mask); }
};
template <class M>
using key_padding_spec = input_mask_spec<key_padding_spec_tag, "key_padding", M>;
template <class M>
using boolean_mask_spec = input_mask_spec<boolean_mask_spec_tag, "boolean_mask", M>;
template <class M>
using additive_mask_spec = input_mask_spec<additive_mask_spec_tag, "additive_mask", M>;

template <class M>
constexpr auto key_padding(M m) {
    return key_padding_spec<M>{m};
}
template <class M>
constexpr auto boolean_mask(M m) {
    return boolean_mask_spec<M>{m};
}
template <class M>
constexpr auto additive_mask(M m) {
    return additive_mask_spec<M>{m};
}

template <class Expr>
struct predicate_spec {
    using tag = predicate_spec_tag;
    Expr expr;
    static constexpr auto label = fixed_string("predicate");
    constexpr auto children() const { return ex::inputs_read(expr); }  // the inputs it reads
};
// fn is called once with placeholders; its body becomes the predicate's expression tree.
template <class Fn>
constexpr auto predicate(Fn fn) {
    using namespace ex;
    auto e = as_expr(fn(b_placeholder, h_placeholder, q_idx_placeholder, kv_idx_placeholder));
    return predicate_spec<decltype(e)>{e};
}

// Sliding-window (local) attention as a predicate: causal, and at most `window` keys back, as in
// FlexAttention's sliding_window_causal (query i sees keys i-window .. i).
// It is a predicate like any other for evaluators; its own type lets code generators see the band of
// keys each query needs and skip key blocks outside it.
template <class Expr>
struct sliding_window_spec : predicate_spec<Expr> {
    using tag = sliding_window_spec_tag;
    int window;                     // known when generating; -1: the run-time input's
    std::string_view window_input;  // the name of the scalar input holding the window, where it is run-time
    static constexpr auto label = fixed_string("sliding_window");
};
constexpr auto sliding_window(int window) {
    auto p = predicate(
        [window](auto, auto, auto q_idx, auto kv_idx) { return q_idx >= kv_idx && q_idx - kv_idx <= window; });
    return sliding_window_spec<decltype(p.expr)>{{p.expr}, window, {}};
}

// The same with the window a run-time input (a scalar_index, window()): kernels bound their loops by the window the
// call gives (key panels, key tiles), as by a window known when generating.
template <class Window>
requires is_input<Window>::value constexpr auto sliding_window(Window window) {
    auto p = predicate(
        [window](auto, auto, auto q_idx, auto kv_idx) { return q_idx >= kv_idx && q_idx - kv_idx <= window(); });
    return sliding_window_spec<decltype(p.expr)>{{p.expr}, -1, Window::name.view()};
}

template <class Len>
struct kv_cache_spec {
    using tag = kv_cache_spec_tag;
    Len lengths;
    static constexpr auto label = cat("kv_cache(", Len::label, ")");
    constexpr auto children() const { return hana::make_tuple(lengths); }
};
template <class Len>
constexpr auto kv_cache(Len lengths) {
    return kv_cache_spec<Len>{lengths};
}

template <class S, class Spec>
struct mask_node {
    using tag = mask_tag;
    S scores;
    Spec spec;
    using kind = typename S::kind;
    static constexpr auto label = cat("mask(", S::label, ", ", Spec::label, ")");
    constexpr auto children() const { return hana::concat(hana::make_tuple(scores), spec.children()); }
};

namespace detail {
template <class SK, class MK>
constexpr bool key_padding_fits() {
    if constexpr (is_key_padding<MK>::value)
        return MK::seq_k == SK::seq_k && MK::batched == SK::batched;
    else
        return false;
}
template <class SK, class MK>
constexpr bool boolean_mask_fits() {
    if constexpr (is_attention_mask<MK>::value)
        return MK::seq_q == SK::seq_q && MK::seq_k == SK::seq_k && MK::batched == SK::batched;
    else if constexpr (is_broadcast_mask<MK>::value)
        return !MK::additive && MK::seq_q == SK::seq_q && MK::seq_k == SK::seq_k && SK::batched;
    else
        return false;
}
template <class SK, class MK>
constexpr bool additive_mask_fits() {
    if constexpr (is_broadcast_mask<MK>::value)
        return MK::additive && MK::seq_q == SK::seq_q && MK::seq_k == SK::seq_k && SK::batched;
    else
        return false;
}
template <class SK, class LK>
constexpr bool kv_cache_fits() {
    if constexpr (is_cache_lengths<LK>::value)
        return LK::seq == SK::seq_k && SK::batched;
    else
        return false;
}
template <class Spec>
constexpr fixed_string spec_kind_label = Spec::label;
template <class L>
constexpr auto spec_kind_label<kv_cache_spec<L>> = cat("kv_cache: ", L::kind::label);
template <class Tag, fixed_string Name, class M>
constexpr auto spec_kind_label<input_mask_spec<Tag, Name, M>> = cat(Name, ": ", M::kind::label);
}  // namespace detail

template <class S, class Spec>
constexpr auto mask(S s, Spec spec) {
    if constexpr (any_error_v<S>) {
        return error_node{};
    } else {
        constexpr auto node = cat("mask(", S::label, ", ", Spec::label, ")");
        using SK = typename S::kind;
        constexpr bool fits = [] {
            if constexpr (!is_scores_v<SK>)
                return false;
            else if constexpr (SK::probabilities)
                return false;
            else if constexpr (is_a<Spec, key_padding_spec_tag>)
                return detail::key_padding_fits<SK, typename decltype(Spec::mask)::kind>();
            else if constexpr (is_a<Spec, boolean_mask_spec_tag>)
                return detail::boolean_mask_fits<SK, typename decltype(Spec::mask)::kind>();
            else if constexpr (is_a<Spec, additive_mask_spec_tag>)
                return detail::additive_mask_fits<SK, typename decltype(Spec::mask)::kind>();
            else if constexpr (is_a<Spec, kv_cache_spec_tag>)
                return detail::kv_cache_fits<SK, typename decltype(Spec::lengths)::kind>();
            else
                return is_a<Spec, causal_spec_tag> || is_predicate_spec<Spec>;
        }();
        if constexpr (!diagnostic::mask_fits_scores<node, detail::spec_kind_label<Spec>, SK::label, fits>::ok) {
            return error_node{};
        } else if constexpr (is_predicate_spec<Spec>) {
            using E = decltype(Spec::expr);
            if constexpr (!diagnostic::expression_rule < node, "a mask predicate must be boolean",
                          ex::checks<E>::typed && E::type == ex::value_type::boolean > ::ok ||
                              !diagnostic::expression_rule<node, "a mask predicate must not read the score",
                                                           !ex::checks<E>::template uses<ex::var_id::score>>::ok) {
                return error_node{};
            } else {
                return mask_node<S, Spec>{s, spec};
            }
        } else {
            return mask_node<S, Spec>{s, spec};
        }
    }
}

}  // namespace attnforge::dsl
