// Diagnostics: every shape rule of the DSL, one template each. A rule that fails stops the build with
// ONE static_assert whose text names the operation and the rule; the compiler's "In instantiation of"
// line just above it shows the rule's template arguments: the node (its label, e.g.
// "linear(x, wq)") and the sizes involved. tests/compile_fail pins each message.
//
// Every factory in nodes/ checks its rules through these templates and returns an error_node when a
// rule fails, and every factory given an error_node returns one silently: one mistake, one message.
#pragma once

#include <attnforge/dsl/fixed_string.hpp>
#include <attnforge/dsl/tags.hpp>

namespace attnforge::dsl {

// What a factory returns after a failed rule; it poisons the rest of the graph without new messages.
struct error_node {
    using tag = error_tag;
    using kind = error_node;
    static constexpr auto label = fixed_string("<error>");
};
template <class... Nodes>
inline constexpr bool any_error_v = (std::is_same_v<Nodes, error_node> || ...);

namespace diagnostic {

template <fixed_string Node, int D, int Hq>
struct split_heads_D_divisible_by_Hq {
    static constexpr bool ok = Hq > 0 && D % Hq == 0;
    static_assert(ok,
                  "attnforge: split_heads: the model width D must be a positive multiple of the head "
                  "count Hq (node, D and Hq are in the instantiation line above)");
};

template <fixed_string Node, int Hq, int Hkv>
struct heads_Hq_multiple_of_Hkv {
    static constexpr bool ok = (Hq == 0 && (Hkv == 0 || Hkv == -1)) || (Hq > 0 && Hkv > 0 && Hq % Hkv == 0);
    static_assert(ok,
                  "attnforge: grouped-query attention: the query head count Hq must be a multiple of the "
                  "key/value head count Hkv, and run-time head counts cannot be mixed with static ones "
                  "(a run-time Hkv, runtime_kv_heads = -1, goes with a run-time Hq; node, Hq and Hkv are in "
                  "the instantiation line above)");
};

template <fixed_string Node, int XWidth, int WeightInWidth>
struct linear_inner_widths_match {
    static constexpr bool ok = XWidth == WeightInWidth;
    static_assert(ok,
                  "attnforge: linear: the input width must equal the weight's first dimension D_in in "
                  "X·W (node, input width and D_in are in the instantiation line above)");
};

template <fixed_string Node, int E, int ScaleWidth>
struct scale_of_the_head_width {
    static constexpr bool ok = E == ScaleWidth;
    static_assert(ok,
                  "attnforge: score: a scale_input<E>() defaults to 1/sqrt(E) of the heads it scales: its E must be "
                  "the head width of Q and K (runtime_head_width where theirs is run-time; node, E of Q and the "
                  "scale's E are in the instantiation line above)");
};

template <fixed_string Node, int Eq, int Ek>
struct score_head_widths_match {
    static constexpr bool ok = Eq == Ek;
    static_assert(ok,
                  "attnforge: score: Q and K must have the same head width E for Q·Kᵀ (node, E of Q and "
                  "E of K are in the instantiation line above)");
};

template <fixed_string Node, fixed_string Expected, fixed_string Given, bool Matches>
struct operand_kind {
    static constexpr bool ok = Matches;
    static_assert(ok,
                  "attnforge: wrong kind of operand: the node expects another kind of tensor (node, the "
                  "expected kind and the given kind are in the instantiation line above)");
};

template <fixed_string Node, int OutWidth, int BiasWidth>
struct bias_width_matches {
    static constexpr bool ok = OutWidth == BiasWidth;
    static_assert(ok,
                  "attnforge: linear: the bias must have the weight's output width D_out (node, D_out and "
                  "the bias width are in the instantiation line above)");
};

template <fixed_string Node, fixed_string MaskKind, fixed_string ScoresKind, bool Fits>
struct mask_fits_scores {
    static constexpr bool ok = Fits;
    static_assert(ok,
                  "attnforge: mask: this mask does not fit these scores: a key padding mask must run over "
                  "the scores' key sequence, an attention mask over their (query, key) sequences, and "
                  "masks apply to raw scores, before softmax (node, mask kind and scores kind are in the "
                  "instantiation line above)");
};

template <fixed_string Node, fixed_string Rule, bool Holds>
struct expression_rule {
    static constexpr bool ok = Holds;
    static_assert(ok,
                  "attnforge: expression: a mask predicate must be a boolean expression of (b, h, q_idx, "
                  "kv_idx) and must not read the score; a score modifier must be a real-valued expression "
                  "(node and the broken rule are in the instantiation line above)");
};

template <fixed_string Node, fixed_string ValueSeq, fixed_string KeySeq>
struct values_run_over_keys {
    static constexpr bool ok = ValueSeq == KeySeq;
    static_assert(ok,
                  "attnforge: weighted_sum: V must run over the same key sequence as the probabilities "
                  "(node, V's sequence and the key sequence are in the instantiation line above)");
};

template <fixed_string Node, fixed_string Given, bool IsSoftmax>
struct weighted_sum_of_softmax {
    static constexpr bool ok = IsSoftmax;
    static_assert(ok,
                  "attnforge: weighted_sum: the probabilities must be a softmax, weighted_sum(softmax(s), v); "
                  "masks and modifiers go on the scores before it (node and the given operand are in the "
                  "instantiation line above)");
};

template <fixed_string Node, bool RawScores>
struct softmax_of_raw_scores {
    static constexpr bool ok = RawScores;
    static_assert(ok,
                  "attnforge: softmax: takes raw scores (a score, masked or modified), not probabilities "
                  "(node in the instantiation line above)");
};

template <fixed_string Node, fixed_string LeftKind, fixed_string RightKind>
struct same_kind {
    static constexpr bool ok = LeftKind == RightKind;
    static_assert(ok,
                  "attnforge: add: both operands of a residual add must have the same kind and sizes "
                  "(node and both kinds are in the instantiation line above)");
};

template <fixed_string Node, int XWidth, int ParamWidth>
struct norm_widths_match {
    static constexpr bool ok = XWidth == ParamWidth;
    static_assert(ok,
                  "attnforge: layer_norm: gamma and beta must have the input's width D (node, D and the "
                  "parameter width are in the instantiation line above)");
};

template <fixed_string Node, int Width>
struct positional_encoding_even_width {
    static constexpr bool ok = Width > 0 && Width % 2 == 0;
    static_assert(ok,
                  "attnforge: positional_encoding: sinusoidal encoding pairs sin/cos columns, so the width "
                  "D must be even (node and D are in the instantiation line above)");
};

template <fixed_string Node, int Width>
struct rope_even_head_width {
    static constexpr bool ok = Width > 0 && Width % 2 == 0;
    static_assert(ok,
                  "attnforge: rope: rotary embedding rotates pairs of columns, so the head width E must "
                  "be static and even (node and E are in the instantiation line above)");
};

template <fixed_string Node, int Heads>
struct static_head_count {
    static constexpr bool ok = Heads > 0;
    static_assert(ok,
                  "attnforge: merge_heads: concatenating heads needs a static head count H (node and H "
                  "are in the instantiation line above)");
};

template <fixed_string Node, int Width>
struct static_head_width {
    static constexpr bool ok = Width > 0;
    static_assert(ok,
                  "attnforge: merge_heads: concatenating heads needs a static head width E (node and E "
                  "are in the instantiation line above)");
};

template <fixed_string Name, fixed_string FirstKind, fixed_string SecondKind>
struct input_declared_once {
    static constexpr bool ok = FirstKind == SecondKind;
    static_assert(ok,
                  "attnforge: graph inputs: one name is declared twice with different kinds or sizes "
                  "(the input name and both kinds are in the instantiation line above)");
};

template <fixed_string Node, bool LeftBatched, bool RightBatched>
struct batching_matches {
    static constexpr bool ok = LeftBatched == RightBatched;
    static_assert(ok,
                  "attnforge: batched and unbatched tensors cannot be combined in one node (node in the "
                  "instantiation line above)");
};

template <fixed_string Input, int Rank, int Indices>
struct read_index_count {
    static constexpr bool ok = Rank == Indices;
    static_assert(ok,
                  "attnforge: expression: reading an input takes one index per axis, batch first (the "
                  "input, its rank and the number of indices given are in the instantiation line above)");
};

template <fixed_string Node, bool SameSequence, bool SameHeads>
struct quantization_values_match_codes {
    static constexpr bool ok = SameSequence && SameHeads;
    static_assert(
        ok,
        "attnforge: dequantize: the scales and zero points must be per token of the codes' own sequence and "
        "heads, (B, H, L), (B, H, L, E/G) or (B, H, L/T, E) beside codes (B, H, L, E) (node in the instantiation "
        "line above)");
};

template <fixed_string Node, bool Int8>
struct symmetric_codes_are_int8 {
    static constexpr bool ok = Int8;
    static_assert(ok,
                  "attnforge: dequantize(codes, scales): codes without a zero point are symmetric and must be int8; "
                  "uint8 codes take a zero point, dequantize(codes, scale, zero) (node in the instantiation line "
                  "above)");
};

template <fixed_string Node, bool SameWidth>
struct group_scales_match_codes {
    static constexpr bool ok = SameWidth;
    static_assert(
        ok,
        "attnforge: dequantize: group scales (B, H, L, E/G) and channel scales (B, H, L/T, E) must be of the "
        "codes' head width E (node in the instantiation line above)");
};

template <fixed_string Node, bool SameLayout>
struct zero_points_match_scales {
    static constexpr bool ok = SameLayout;
    static_assert(ok,
                  "attnforge: dequantize(codes, scale, zero): the scales and zero points must share one layout, both "
                  "per token (B, H, L) or both per channel of the same blocks of T tokens (B, H, L/T, E) (node in "
                  "the instantiation line above)");
};

template <fixed_string Node, bool ScaleRole, bool ZeroRole>
struct quantization_roles {
    static constexpr bool ok = ScaleRole && ZeroRole;
    static_assert(ok,
                  "attnforge: dequantize(codes, scale, zero): the second operand must be token scales and the third "
                  "token zero points (token_values<..., quantization_role::scale / zero>; node in the instantiation "
                  "line above)");
};

// expect<Node, "activation", is_activation>(kind): checks one operand's kind, naming what was given.
template <fixed_string Node, fixed_string Expected, template <class> class Is, class Kind>
constexpr bool expect() {
    return operand_kind<Node, Expected, Kind::label, Is<Kind>::value>::ok;
}

}  // namespace diagnostic
}  // namespace attnforge::dsl
