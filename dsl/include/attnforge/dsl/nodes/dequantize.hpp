// dequantize: the values a quantized KV cache stands for (docs/contract.md §1, caches), codes (B, H, L, E) read with
// float32 scales in one of two layouts:
//   by token with a zero point, as OpenVINO's CPU plugin stores its u8 caches: uint8 codes, scale and zero per
//   (b, h, token): x[b, h, l, e] = (codes[b, h, l, e] − zero[b, h, l]) · scale[b, h, l]    dequantize(codes, s, z)
//   by channel with a zero point (KIVI's keys): uint8 codes, scale and zero per (b, h, block of T tokens, channel):
//   x[b, h, l, e] = (codes[b, h, l, e] − zero[b, h, l/T, e]) · scale[b, h, l/T, e]        dequantize(codes, s, z)
//   symmetric, int8 codes without a zero point, a scale per token (token_values) or per group of G channels
//   (group_scales, llama.cpp's q8_0 blocks at G = 32): x[b, h, l, e] = codes[b, h, l, e] · scale[b, h, l(, e/G)]
//                                                                                             dequantize(codes, s)
// The result is heads (B, H, L, E): an attention over dequantize(k, …), dequantize(v, …) means attention over
// those values. Beside the node, how an attention reads it (dsl/kv_source.hpp): quantized_rows, whose lowering
// reads the codes in place and converts them in registers (codegen/lower/kv_source.hpp), never a dequantized copy.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/kv_source.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

// The zero point of symmetric codes: none (dequantize(codes, scales)).
struct no_zero_point {};

template <class Codes, class Scale, class Zero = no_zero_point>
struct dequantize_node {
    using tag = dequantize_tag;
    Codes codes;
    Scale scale;
    [[no_unique_address]] Zero zero;
    using kind = heads_kind<Codes::kind::seq, Codes::kind::heads, Codes::kind::head_width, true>;
    // Symmetric codes: no zero point. Grouped: a scale per `group` channels (group_scales), else one a token. By
    // channel: a scale and zero point per channel of each block of `token_block` tokens (channel_values).
    static constexpr bool symmetric = std::is_same_v<Zero, no_zero_point>;
    static constexpr bool grouped = is_group_scales<typename Scale::kind>::value;
    static constexpr bool by_channel = is_channel_values<typename Scale::kind>::value;
    static constexpr int token_block = [] {
        if constexpr (by_channel)
            return Scale::kind::token_block;
        else
            return 0;
    }();
    static constexpr int group = [] {
        if constexpr (grouped)
            return Scale::kind::group;
        else
            return 0;
    }();
    static constexpr auto label = [] {
        if constexpr (symmetric)
            return cat("dequantize(", Codes::label, ", ", Scale::label, ")");
        else
            return cat("dequantize(", Codes::label, ", ", Scale::label, ", ", Zero::label, ")");
    }();
    constexpr auto children() const {
        if constexpr (symmetric)
            return hana::make_tuple(codes, scale);
        else
            return hana::make_tuple(codes, scale, zero);
    }
};

// Scales or zero points of codes with a zero point: per token (token_values) or per channel of a block of tokens.
template <class K>
struct is_zero_point_kind : std::bool_constant<is_token_values<K>::value || is_channel_values<K>::value> {};

// Scales of symmetric codes: one per token (token_values, role scale) or per group of channels (group_scales).
template <class K>
struct is_symmetric_scales : std::bool_constant<is_token_values<K>::value || is_group_scales<K>::value> {};

// Whether a symmetric cache's scales are scales (a token_values input of role scale; group_scales always are), and
// have the codes' head width (group_scales; token_values have none).
template <class S>
constexpr bool scale_role() {
    if constexpr (is_token_values<S>::value)
        return S::role == quantization_role::scale;
    else
        return true;
}
template <class S, class C>
constexpr bool same_width() {
    if constexpr (is_group_scales<S>::value || is_channel_values<S>::value)
        return S::head_width == C::head_width;
    else
        return true;
}

// Scales and zero points of uint8 codes: one per token (token_values), or per channel of a block of tokens
// (channel_values), both of the same layout.
template <class S, class Z>
constexpr bool is_zero_point_pair() {
    if constexpr (is_token_values<S>::value && is_token_values<Z>::value)
        return true;
    else if constexpr (is_channel_values<S>::value && is_channel_values<Z>::value)
        return S::token_block == Z::token_block && S::head_width == Z::head_width;
    else
        return false;
}

template <class Codes, class Scale, class Zero>
constexpr auto dequantize(Codes codes, Scale scale, Zero zero) {
    if constexpr (any_error_v<Codes, Scale, Zero>) {
        return error_node{};
    } else {
        constexpr auto node = cat("dequantize(", Codes::label, ", ", Scale::label, ", ", Zero::label, ")");
        using C = typename Codes::kind;
        using S = typename Scale::kind;
        using Z = typename Zero::kind;
        constexpr bool by_channel = is_channel_values<S>::value;
        if constexpr (!diagnostic::expect<node, "codes (B, H, L, E) uint8 or int8", is_codes, C>()) {
            return error_node{};
        } else if constexpr (!diagnostic::expect<node, "token_values (B, H, L) or channel_values (B, H, L/T, E)",
                                                 is_zero_point_kind, S>() ||
                             !diagnostic::expect<node, "token_values (B, H, L) or channel_values (B, H, L/T, E)",
                                                 is_zero_point_kind, Z>()) {
            return error_node{};
        } else if constexpr (!diagnostic::zero_points_match_scales<node, is_zero_point_pair<S, Z>()>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::quantization_roles<node, S::role == quantization_role::scale,
                                                             Z::role == quantization_role::zero>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::quantization_values_match_codes < node,
                             S::seq.view() == C::seq.view() && Z::seq.view() == C::seq.view(),
                             S::heads == C::heads && Z::heads == C::heads > ::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::group_scales_match_codes<node, !by_channel || same_width<S, C>()>::ok) {
            return error_node{};
        } else {
            return dequantize_node<Codes, Scale, Zero>{codes, scale, zero};
        }
    }
}

// Symmetric int8 codes: x = codes · scale, the scale per token or per group of G channels.
template <class Codes, class Scale>
constexpr auto dequantize(Codes codes, Scale scale) {
    if constexpr (any_error_v<Codes, Scale>) {
        return error_node{};
    } else {
        constexpr auto node = cat("dequantize(", Codes::label, ", ", Scale::label, ")");
        using C = typename Codes::kind;
        using S = typename Scale::kind;
        if constexpr (!diagnostic::expect<node, "codes (B, H, L, E) uint8 or int8", is_codes, C>()) {
            return error_node{};
        } else if constexpr (!diagnostic::expect<node, "token_values (B, H, L) or group_scales (B, H, L, E/G)",
                                                 is_symmetric_scales, S>()) {
            return error_node{};
        } else if constexpr (!diagnostic::symmetric_codes_are_int8<node, C::code == element_type::int8>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::quantization_roles<node, scale_role<S>(), true>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::quantization_values_match_codes<node, S::seq.view() == C::seq.view(),
                                                                          S::heads == C::heads>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::group_scales_match_codes<node, same_width<S, C>()>::ok) {
            return error_node{};
        } else {
            return dequantize_node<Codes, Scale>{codes, scale, {}};
        }
    }
}

// How an attention reads a dequantized K or V: its codes in place with their scales (and zero points).
template <class Codes, class Scale, class Zero = no_zero_point>
struct quantized_rows {
    using tag = kv_rows_tag;
    using kind = typename dequantize_node<Codes, Scale, Zero>::kind;
    dequantize_node<Codes, Scale, Zero> node;
};

template <class Codes, class Scale, class Zero>
constexpr auto rows_of(const dequantize_node<Codes, Scale, Zero>& node) {
    return quantized_rows<Codes, Scale, Zero>{node};
}

}  // namespace attnforge::dsl
