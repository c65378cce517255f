// Graph inputs: named tensors bound by name at run time (activations, weights, masks).
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/expr.hpp>
#include <attnforge/dsl/kinds.hpp>

#include <boost/hana/tuple.hpp>

namespace attnforge::dsl {

namespace hana = boost::hana;

template <fixed_string Name, class Kind>
struct input_node {
    using tag = input_tag;
    using kind = Kind;
    static constexpr auto name = Name;
    static constexpr auto label = Name;
    constexpr auto children() const { return hana::make_tuple(); }

    // Inside a predicate or a score modifier: this input's value at the given indices (ex::read),
    // one index per axis, row-major, batch first: doc_ids(b, q_idx).
    template <ex::operand... Index>
    constexpr auto operator()(const Index&... index) const {
        (void)diagnostic::read_index_count<Name, kind_rank<Kind>(), sizeof...(Index)>::ok;
        return ex::read<input_node, std::remove_cvref_t<decltype(ex::as_expr(index))>...>{
            hana::make_tuple(ex::as_expr(index)...)};
    }
};

template <class T>
struct is_input : std::false_type {};
template <fixed_string N, class K>
struct is_input<input_node<N, K>> : std::true_type {};

// An activation (B, L, D): the run-time length is that of sequence Seq (by default, the input's own).
template <fixed_string Name, int D, fixed_string Seq = Name>
constexpr auto activation() {
    return input_node<Name, activation_kind<Seq, D, true>>{};
}

// An activation without a batch axis, (L, D), as in the seeds' single-sequence examples.
template <fixed_string Name, int D, fixed_string Seq = Name>
constexpr auto unbatched_activation() {
    return input_node<Name, activation_kind<Seq, D, false>>{};
}

// Per-head activations (B, H, L, E) given directly, as in scaled-dot-product attention. H defaults to
// a run-time head count.
template <fixed_string Name, int E, fixed_string Seq = Name, int H = runtime_heads>
constexpr auto heads_input() {
    return input_node<Name, heads_kind<Seq, H, E, true>>{};
}

// The codes of a quantized KV cache (B, H, L, E), uint8 or int8 (Code), H and E as heads_input's: read by
// dequantize(codes, scale, zero) or dequantize(codes, scales) (nodes/dequantize.hpp), never as heads themselves.
template <fixed_string Name, int E, fixed_string Seq = Name, int H = runtime_heads,
          element_type Code = element_type::uint8>
constexpr auto quantized_codes() {
    static_assert(Code == element_type::uint8 || Code == element_type::int8,
                  "attnforge: a quantized cache's codes are uint8 or int8");
    return input_node<Name, codes_kind<Seq, H, E, Code>>{};
}

// (B, H, L) float32: a quantized cache's scale per (b, h, token) (Role scale) or its zero point (Role zero).
template <fixed_string Name, fixed_string Seq, int H = runtime_heads, quantization_role Role = quantization_role::scale>
constexpr auto token_values() {
    return input_node<Name, token_values_kind<Seq, H, Role>>{};
}

// (B, H, L, E/G) float32: a quantized cache's scale per group of G channels of each (b, h, token), for codes of head
// width E (E and H as the codes'): dequantize(codes, scales) (int8 codes, no zero point).
template <fixed_string Name, fixed_string Seq, int H, int E, int G>
constexpr auto group_scales() {
    return input_node<Name, group_scales_kind<Seq, H, E, G>>{};
}

// (B, H, ⌈L/T⌉, E) float32: a quantized cache's scale (Role scale) or zero point (Role zero) per channel of each
// block of T tokens, for codes of head width E: dequantize(codes, scales, zeros) (uint8 codes), keys by channel.
template <fixed_string Name, fixed_string Seq, int H, int E, int T, quantization_role Role>
constexpr auto channel_values() {
    return input_node<Name, channel_values_kind<Seq, H, E, T, Role>>{};
}

// A projection weight (D_in, D_out); projections multiply on the right: X · W.
template <fixed_string Name, int In, int Out>
constexpr auto weight() {
    return input_node<Name, weight_kind<In, Out>>{};
}

// A vector parameter (D): a bias, LayerNorm's gamma or beta.
template <fixed_string Name, int D>
constexpr auto weight_vector() {
    return input_node<Name, weight_vector_kind<D>>{};
}

// (B, Lk) bool over key sequence SeqK; true means the key is padding and is ignored.
template <fixed_string Name, fixed_string SeqK>
constexpr auto key_padding_mask() {
    return input_node<Name, key_padding_kind<SeqK, true>>{};
}

// (B, Lq, Lk) bool; true means the (query, key) pair takes part.
template <fixed_string Name, fixed_string SeqQ, fixed_string SeqK>
constexpr auto attention_mask() {
    return input_node<Name, attention_mask_kind<SeqQ, SeqK, true>>{};
}

// PyTorch's attn_mask of scaled_dot_product_attention, (B or 1, H or 1, Lq, Lk), broadcast over a batch or head
// axis of size 1: bool, true = the pair takes part (boolean_mask), or float, added to the scaled scores with −∞
// removing the pair (additive_mask; stored in the kernel's storage type, as the other float tensors).
template <fixed_string Name, fixed_string SeqQ, fixed_string SeqK>
constexpr auto broadcast_mask() {
    return input_node<Name, broadcast_mask_kind<SeqQ, SeqK, false>>{};
}
template <fixed_string Name, fixed_string SeqQ, fixed_string SeqK>
constexpr auto broadcast_additive_mask() {
    return input_node<Name, broadcast_mask_kind<SeqQ, SeqK, true>>{};
}

// (B, L) float32, one number per token of sequence Seq, for predicates and modifiers to read.
template <fixed_string Name, fixed_string Seq>
constexpr auto sequence_values() {
    return input_node<Name, sequence_values_kind<Seq, true>>{};
}

// (B, L) int32, one index per token of sequence Seq: document ids of packed sequences, segment ids.
template <fixed_string Name, fixed_string Seq>
constexpr auto sequence_indices() {
    return input_node<Name, sequence_values_kind<Seq, true, true>>{};
}

// (B) float32, one number per batch entry.
template <fixed_string Name>
constexpr auto batch_values() {
    return input_node<Name, batch_values_kind<false>>{};
}

// (B) int32, one index per batch entry: a prefix length per sequence.
template <fixed_string Name>
constexpr auto batch_indices() {
    return input_node<Name, batch_values_kind<true>>{};
}

namespace detail {
// A default given as integers: none, N, or N / D.
template <long long... Ratio>
struct default_ratio {
    static constexpr long long num = 0, den = 1;
};
template <long long N>
struct default_ratio<N> {
    static constexpr long long num = N, den = 1;
};
template <long long N, long long D>
struct default_ratio<N, D> {
    static_assert(D != 0, "attnforge: a default's denominator must not be 0");
    static constexpr long long num = N, den = D;
};
}  // namespace detail

// () float32: one number for the whole call (a soft-cap), read as cap() by predicates and modifiers. With a default
// a call may leave it out: scalar_value<"cap", 20>(), or a ratio, scalar_value<"cap", 1, 2>() for 0.5.
template <fixed_string Name, long long... Default>
requires(sizeof...(Default) <= 2) constexpr auto scalar_value() {
    using R = detail::default_ratio<Default...>;
    return input_node<Name, scalar_kind<false, sizeof...(Default) != 0, R::num, R::den>>{};
}

// () int32: one integer for the whole call (a window length), read as window(). With a Default
// (scalar_index<"window", 128>()) a call may leave it out.
template <fixed_string Name, long long... Default>
requires(sizeof...(Default) <= 1) constexpr auto scalar_index() {
    return input_node<Name, scalar_kind<true, sizeof...(Default) == 1, detail::default_ratio<Default...>::num>>{};
}

// (H) float32: one number per head (H the heads', run-time by default), read as slopes(h).
template <fixed_string Name, int H = runtime_heads>
constexpr auto head_values() {
    return input_node<Name, head_values_kind<H>>{};
}

// ALiBi's slopes (H) float32, optional: a call may give its own (a model's), else 2^(−8(h+1)/H) for its H.
template <fixed_string Name = "slopes", int H = runtime_heads>
constexpr auto alibi_slopes() {
    return input_node<Name, head_values_kind<H, default_rule::alibi_slopes>>{};
}

// () float32, optional: the scores' scale where a call gives it (score(q, k, s), attention(q, k, v, s, ...)), 1/√E
// where it does not; E the heads' width, run-time (runtime_head_width) or static, as the score's operands have it.
template <int E = runtime_head_width, fixed_string Name = "scale">
constexpr auto scale_input() {
    return input_node<Name, scale_kind<E>>{};
}

// (B) int32: how many slots of the cache of sequence Seq (its length Lmax) hold keys, per batch entry;
// each value in [0, Lmax], checked when inputs are bound. Used by kv_cache (nodes/mask.hpp).
template <fixed_string Name, fixed_string Seq>
constexpr auto cache_lengths() {
    return input_node<Name, cache_lengths_kind<Seq>>{};
}

}  // namespace attnforge::dsl
