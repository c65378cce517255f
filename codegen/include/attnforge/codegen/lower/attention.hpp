// The attention pattern, lowered whole: weighted_sum(softmax(layers(score(q, k))), v), or a softmax
// alone whose probabilities are the result (dsl::match_attention). In order: V's source, the score product
// over K's source (lower/score.hpp, lower/kv_source.hpp), its layers (lower/masks.hpp), then the core of the
// plan's strategy
// (lower/materialized.hpp or lower/streaming.hpp), recorded as a role for the schedule. Everything one
// pattern needs is passed along explicitly; nothing is left on the context between two patterns.
#pragma once

#include <attnforge/codegen/lower/block_ranges.hpp>
#include <attnforge/codegen/lower/core_inputs.hpp>
#include <attnforge/codegen/lower/decode.hpp>
#include <attnforge/codegen/lower/head_group.hpp>
#include <attnforge/codegen/lower/kv_source.hpp>
#include <attnforge/codegen/lower/masks.hpp>
#include <attnforge/codegen/lower/materialized.hpp>
#include <attnforge/codegen/lower/node.hpp>
#include <attnforge/codegen/lower/score.hpp>
#include <attnforge/codegen/lower/streaming.hpp>

#include <boost/hana/for_each.hpp>

#include <string>
#include <variant>

namespace attnforge::codegen {

namespace detail {

// V's column e, clamped where the head width is not a whole number of vectors (64 lanes at most), so
// that schedules may round vector tiles up.
inline Halide::Expr value_column(const Halide::Var& e, int head_width) {
    return head_width % 64 == 0 ? Halide::Expr(e) : Halide::clamp(e, 0, head_width - 1);
}

template <class Layer>
struct is_modify_layer : std::false_type {};
template <class Expr>
struct is_modify_layer<dsl::modify_layer<Expr>> : std::true_type {};

// The pattern's band as the kernel bounds loops by it: a window known when generating is a constant, a run-time one
// the value of its scalar input (one per call).
inline KeyBand key_band_of(const dsl::key_band& band, LoweringContext& ctx) {
    KeyBand b{band.causal, {}};
    if (band.window >= 0)
        b.window = Halide::Expr(band.window);
    else if (!band.window_input.empty())
        b.window = ctx.inputs.find(band.window_input)->second.func();
    return b;
}

}  // namespace detail

template <class Score, class Layers, class Values, dsl::fixed_string Label>
Lowered Lower::attention(const dsl::attention_pattern<Score, Layers, Values, Label>& p, LoweringContext& ctx) {
    using Pattern = dsl::attention_pattern<Score, Layers, Values, Label>;
    KeyValueSource v;
    std::string weighted_name;
    if constexpr (Pattern::has_values) {
        v = source(p.value_source(), ctx);
        weighted_name = ctx.name("weighted_sum");
    }
    // The band in positions. The materialized core skips key panels by query index, so it keeps every
    // panel where a cache moves the queries (the streaming core bounds its key tiles by position).
    const KeyBand band = detail::key_band_of(p.band(), ctx);
    const auto* materialized = std::get_if<MaterializedPlan>(&ctx.plan);
    KeyBand usable = materialized && Pattern::has_cache ? KeyBand{} : band;
    // A run-time window bounds the streaming core's key tiles through its predicate's bounds per block alone
    // (lower/masks.hpp): as a loop bound as well it cost 5 % (sliding_window_attention L = 4096, 8192, Zen 4).
    if (std::holds_alternative<StreamingPlan>(ctx.plan) && p.band().window < 0) usable.window = Halide::Expr();
    // Key panels outside a query tile's band are skipped under the materialized plan only (the streaming
    // core skips whole key tiles by its own loop bounds).
    const KeyBand skipped = materialized && materialized->skip_band_panels ? usable : KeyBand{};

    detail::CoreInputs in;
    const LoweredScores lowered =
        detail::lower_score_product(p.score, p.key_source(), {Pattern::masks_only, skipped}, ctx);
    in.dot = lowered.product;
    in.scores = lowered.scores;
    if (lowered.keys.valid_keys) {  // a cache: the queries sit at its end
        in.positions.lengths = lowered.keys.valid_keys;
        in.positions.query_count = in.scores.extents[1];
    }
    // Under the streaming plan the predicates that fill blocks come last (lower/masks.hpp, fills_blocks): the
    // scores before them are those of the blocks they keep whole.
    const bool streaming = std::holds_alternative<StreamingPlan>(ctx.plan);
    bool deferred_any = false;
    auto apply_layers = [&](bool deferred) {
        boost::hana::for_each(p.layers, [&](const auto& layer) {
            if ((streaming && detail::fills_blocks(layer)) != deferred) return;
            in.scores = detail::apply_layer(layer, in.scores, in.run_time, in.positions, ctx);
            in.modified |= detail::is_modify_layer<std::decay_t<decltype(layer)>>::value;
            deferred_any |= deferred;
        });
    };
    apply_layers(false);
    const Lowered before_deferred = in.scores;
    apply_layers(true);
    if (deferred_any) in.full_block_scores = before_deferred;
    in.in_base2 = Pattern::masks_only;
    in.band = usable;
    in.name = ctx.name("softmax");

    if constexpr (!Pattern::has_values) {
        // The probabilities, or their rows' log-sum-exp, are the result: every strategy materializes them.
        MaterializedCore core = detail::materialized_softmax(in, skipped, ctx.tiles(), false);
        if (ctx.softmax_result == SoftmaxResult::logsumexp) {
            detail::materialized_logsumexp(core, ctx.name("logsumexp"));
            ctx.roles.cores.push_back(core);
            const std::vector<Halide::Expr>& s = core.score_extents;  // (Lk, Lq, H, B)
            return {core.output, {s[1], s[2], s[3]}};
        }
        detail::materialized_probabilities(core, ctx.name("probabilities"));
        ctx.roles.cores.push_back(core);
        return {core.output, core.score_extents};
    } else {
        using S = decltype(p.score);
        using V = Values;
        constexpr int Hq = S::kind::heads, Hkv = V::kind::heads;
        const HeadGroup group = head_group<Hq, Hkv>(in.scores.extents[2], v.extents[2]);
        const int E = ctx.head_width_of(V::kind::head_width);
        Halide::Var e("e"), q("q"), h("h"), b("b");
        Halide::Func values(weighted_name + "_values");  // (e, k, h, b)
        // The decode core weighs V rows that have a factor of their own (a quantized cache's scale) by it once per
        // row: it reads them unscaled.
        const auto* decode = std::get_if<DecodePlan>(&ctx.plan);
        const bool scaled_weights = decode && v.row_scale;
        // uint8 V with a zero point of its own: the decode core subtracts it once per tile (lower/decode.hpp), P·V
        // multiplies the codes as they are. (int8 codes are their values: nothing to fold, but on integer products
        // below they enter as uint8 with a zero point of 128.)
        const bool fold_zero = scaled_weights && v.code_zero && !Halide::Internal::is_const(v.code_zero(0, 0, 0));
        // 8-bit V with a row scale on integer dot products (lower/integer_values.hpp): the unsigned codes (int8 c as
        // c + 128, less a zero point of 128, which the decode core subtracts as uint8's own).
        const bool integer_values = scaled_weights && decode->integer_products && v.unsigned_codes && v.code_zero &&
                                    decode->lanes == 16 && E % 16 == 0;
        if (fold_zero || integer_values)
            values(e, q, h, b) = Halide::cast<float>(v.unsigned_codes(detail::value_column(e, E), q, h, b));
        else
            values(e, q, h, b) = (scaled_weights ? v.unscaled : v.element)(detail::value_column(e, E), q, h, b);
        Halide::Func output;
        // P·V over pairs of keys reads V's bf16 form (bf16_products: a bf16 kernel): as stored where it is the
        // kernel's own input, with no conversion to float32 and back; rounded where it is a projection.
        Halide::Func stored_values;
        if (ctx.tiles().bf16_products && v.stored) {
            stored_values = Halide::Func(weighted_name + "_stored_values");
            stored_values(e, q, h, b) = v.stored(detail::value_column(e, E), q, h, b);
        }
        if (decode) {
            // Float32 V read in place: the V whose rows the decode schedule prefetches (in its loops of four rows
            // and of a fixed group's one query; schedules/decode.cpp), in the loop over a span's keys; spans of four
            // end the loop at the valid keys.
            const bool prefetched_values = v.row_buffer.defined() && v.row_buffer.type() == Halide::Float(32);
            DecodeCore core = detail::decode_attention(in, values, stored_values,
                                                       scaled_weights ? v.row_scale : nullptr, E, group, *decode,
                                                       weighted_name, prefetched_values ? 4 : 1,
                                                       integer_values || fold_zero ? v.code_zero : nullptr,
                                                       integer_values ? v.unsigned_codes : nullptr);
            core.value_buffer = v.row_buffer;
            output = core.output;
            ctx.roles.cores.push_back(core);
        } else if (const auto* streaming = std::get_if<StreamingPlan>(&ctx.plan)) {
            StreamingCore core = detail::streaming_attention(in, values, !v.dense_rows, bool(v.stored), v.extents[2], E,
                                                             group, *streaming, ctx.block_ranges, weighted_name);
            output = core.output;
            ctx.roles.cores.push_back(core);
        } else {
            // P·V over bf16 pairs where V has a bf16 form and no band cuts pairs.
            // Under a causal band the pairs stay whole: the band of a query tile ends at a multiple of the
            // (even) tile, and past Lk the weights are zero. A window's start can split a pair.
            const bool bf16_weights = ctx.tiles().bf16_products && v.stored && !usable.windowed() &&
                                      (!usable.causal || ctx.tiles().query_tile % 2 == 0);
            MaterializedCore core = detail::materialized_softmax(in, skipped, ctx.tiles(), true, bf16_weights);
            core.head_width = E;
            core.values = values;
            // A 16-bit V that P·V multiplies in float32 (no bf16 pairs) is converted once per call, not at every
            // register tile's read of it (two more instructions per vector on the FMA ports, pv_unroll FMAs).
            const bool converted_values = !bf16_weights && v.row_buffer.defined() &&
                                          (v.row_buffer.type() == Halide::BFloat(16) ||
                                           v.row_buffer.type() == Halide::Float(16));
            core.pack_values = !v.dense_rows || converted_values;
            detail::materialized_weighted_sum(core, group, ctx.tiles(), weighted_name, v.extents[2], stored_values);
            output = core.output;
            ctx.roles.cores.push_back(core);
        }
        const std::vector<Halide::Expr>& s = in.scores.extents;  // (Lk, Lq, H, B)
        return {output, {Halide::Expr(E), s[1], s[2], s[3]}};
    }
}

template <class S, dsl::fixed_string Label>
Lowered Lower::impl(const dsl::softmax_node<S, Label>& n, LoweringContext& ctx) {
    return attention(dsl::match_attention(n), ctx);
}

template <class P, class V>
Lowered Lower::impl(const dsl::weighted_sum_node<P, V>& n, LoweringContext& ctx) {
    return attention(dsl::match_attention(n), ctx);
}

}  // namespace attnforge::codegen
