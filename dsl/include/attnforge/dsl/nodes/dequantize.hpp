// dequantize: the values a quantized KV cache stands for (docs/contract.md §1, caches), by token as OpenVINO's
// CPU plugin stores its u8 caches: codes (B, H, L, E) uint8 with a float32 scale and zero point per (b, h, token),
//   x[b, h, l, e] = (codes[b, h, l, e] − zero[b, h, l]) · scale[b, h, l].
// The result is heads (B, H, L, E): an attention over dequantize(k, …), dequantize(v, …) means attention over
// those values. Beside the node, how an attention reads it (dsl/kv_source.hpp): quantized_rows, whose lowering
// reads the codes in place and converts them in registers (codegen/lower/kv_source.hpp), never a dequantized copy.
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/kv_source.hpp>
#include <attnforge/dsl/nodes/input.hpp>

namespace attnforge::dsl {

template <class Codes, class Scale, class Zero>
struct dequantize_node {
    using tag = dequantize_tag;
    Codes codes;
    Scale scale;
    Zero zero;
    using kind = heads_kind<Codes::kind::seq, Codes::kind::heads, Codes::kind::head_width, true>;
    static constexpr auto label = cat("dequantize(", Codes::label, ", ", Scale::label, ", ", Zero::label, ")");
    constexpr auto children() const { return hana::make_tuple(codes, scale, zero); }
};

template <class Codes, class Scale, class Zero>
constexpr auto dequantize(Codes codes, Scale scale, Zero zero) {
    if constexpr (any_error_v<Codes, Scale, Zero>) {
        return error_node{};
    } else {
        constexpr auto node = cat("dequantize(", Codes::label, ", ", Scale::label, ", ", Zero::label, ")");
        using C = typename Codes::kind;
        using S = typename Scale::kind;
        using Z = typename Zero::kind;
        if constexpr (!diagnostic::expect<node, "codes (B, H, L, E) uint8 or int8", is_codes, C>()) {
            return error_node{};
        } else if constexpr (!diagnostic::expect<node, "token_values (B, H, L)", is_token_values, S>() ||
                             !diagnostic::expect<node, "token_values (B, H, L)", is_token_values, Z>()) {
            return error_node{};
        } else if constexpr (!diagnostic::quantization_roles<node, S::role == quantization_role::scale,
                                                             Z::role == quantization_role::zero>::ok) {
            return error_node{};
        } else if constexpr (!diagnostic::quantization_values_match_codes < node,
                             S::seq.view() == C::seq.view() && Z::seq.view() == C::seq.view(),
                             S::heads == C::heads && Z::heads == C::heads > ::ok) {
            return error_node{};
        } else {
            return dequantize_node<Codes, Scale, Zero>{codes, scale, zero};
        }
    }
}

// How an attention reads a dequantized K or V: its codes in place with their per-token scale and zero point.
template <class Codes, class Scale, class Zero>
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
