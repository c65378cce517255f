// The materialized core: all Lk scores of a query tile, their row max and exps and row sum, then either
// the probabilities exps / z (a softmax whose weights are the result) or (Σ_k exps · V) / z, the same
// value as P · V with P = exps / z, so that no normalized P is ever materialized. Fully masked rows
// (m = −∞, z = 0) give zero rows, never NaN; a NaN that reaches a row (z = NaN) stays NaN, never a
// silent zero row (docs/robustness.md).
#pragma once

#include <attnforge/codegen/lower/amx_tiles.hpp>
#include <attnforge/codegen/lower/bf16_pairs.hpp>
#include <attnforge/codegen/lower/core_inputs.hpp>
#include <attnforge/codegen/lower/head_group.hpp>
#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>
#include <attnforge/codegen/lower/vector_math.hpp>

#include <tuple>

namespace attnforge::codegen::detail {

// softmax(S) up to its row sum. `skipped_band`: the band whose key panels outside a query tile are never
// computed (the score product skips them too); `band_only`: only keys inside it are ever read (a weighted
// sum restricted to it), so exps outside need no value at all. `bf16_weights` (no band, or a causal one):
// each exp is also rounded to bf16 for a P·V over bf16 pairs (materialized_weighted_sum); with no band in
// the same loop (a Tuple: a second pass over the float32 exps to round them took 8.6 % of bf16 sdpa,
// L = 2048, one Zen 4 core), under a causal band in a pass of its own. The row sum adds the float32 exps.
// (The sum adding the rounded values measured 4 % slower.) With no band the weights past Lk need no
// zeroing: V's pairs are zero there and every exp is finite (softmax_exp2 saturates).
inline MaterializedCore materialized_softmax(const CoreInputs& in, const KeyBand& skipped_band,
                                             const Tiles& tiles, bool band_only, bool bf16_weights = false) {
    MaterializedCore core;
    fill_common(core, in);
    Halide::Var k("k"), q("q"), h("h"), b("b");
    const Halide::Expr Lk = in.scores.extents[0];
    core.exps = Halide::Func(in.name + "_exps");
    std::tie(core.row_max, core.row_max_lanes) = reduce_by_lanes(
        in.name + "_row_max", lane_max(), core.scores, Lk, {q, h, b}, q, skipped_band, tiles.query_tile, tiles.lanes);
    // A fully masked row has max -inf: shift by 0 instead, so that every exp(-inf) is exactly 0
    // (softmax_exp2(-inf) is 0; Halide's fast_exp is not used because fast_exp(-inf) is NaN).
    const Halide::Expr shift =
        ieee(Halide::select(core.row_max(q, h, b) == minus_infinity(), 0.0f, core.row_max(q, h, b)));
    if (skipped_band.causal) {
        // Exps only inside the tile's band (whole vectors). Outside: 0 (what the mask gives) where the
        // probabilities are the result; nothing where only the band is read (no pass over the rest).
        core.exps(k, q, h, b) = band_only ? Halide::undef<float>() : Halide::Expr(0.0f);
        Halide::RDom re(0, Lk, "re");
        restrict_to_block_band(re, re, q, skipped_band, tiles.query_tile, tiles.lanes);
        core.exps(re, q, h, b) = softmax_exp2(core.scores(re, q, h, b) - shift);
        core.banded_exps = true;
        if (bf16_weights) {  // read inside the band only (materialized_weighted_sum); 0 past Lk, where
                             // the last pair of an odd Lk ends and no exp was made
            core.rounded_weights = Halide::Func(in.name + "_rounded_weights");
            core.rounded_weights(k, q, h, b) =
                round_weight_to_bf16(Halide::select(k < Lk, core.exps(k, q, h, b), 0.0f));
        }
    } else if (bf16_weights) {
        const Halide::Expr x = softmax_exp2(core.scores(k, q, h, b) - shift, ExpAccuracy::bf16_weights);
        core.exps_and_weights = Halide::Func(in.name + "_exps_and_weights");
        core.exps_and_weights(k, q, h, b) = Halide::Tuple(x, round_weight_to_bf16(x));
        core.rounded_weights = Halide::Func(in.name + "_rounded_weights");
        core.exps(k, q, h, b) = core.exps_and_weights(k, q, h, b)[0];
        core.rounded_weights(k, q, h, b) = core.exps_and_weights(k, q, h, b)[1];
    } else {
        core.exps(k, q, h, b) = softmax_exp2(core.scores(k, q, h, b) - shift);
    }
    std::tie(core.row_sum, core.row_sum_lanes) = reduce_by_lanes(
        in.name + "_row_sum", lane_sum(), core.exps, Lk, {q, h, b}, q, skipped_band, tiles.query_tile, tiles.lanes);
    return core;
}

// The probabilities exps / z as the core's output.
inline void materialized_probabilities(MaterializedCore& core, const std::string& name) {
    Halide::Var k("k"), q("q"), h("h"), b("b");
    Halide::Func p(name);
    p(k, q, h, b) =
        ieee(Halide::select(core.row_sum(q, h, b) == 0.0f, 0.0f, core.exps(k, q, h, b) / core.row_sum(q, h, b)));
    core.output = p;
}

// The rows' log-sum-exp as the core's output, (q, h, b), in natural log: the scores are in base 2 and
// their exps were taken after subtracting `shift` (the row max, or 0 for a fully masked row), so
// log Σ e^s = ln 2 · shift + ln z. A fully masked row (z = 0) gives −∞, a row with a NaN NaN
// (vector_log keeps both).
inline void materialized_logsumexp(MaterializedCore& core, const std::string& name) {
    constexpr double ln_2 = 0.69314718055994530942;
    Halide::Var q("q"), h("h"), b("b");
    const Halide::Expr m = core.row_max(q, h, b), z = core.row_sum(q, h, b);
    const Halide::Expr shift = Halide::select(m == minus_infinity(), 0.0f, m);
    Halide::Func lse(name);
    lse(q, h, b) = ieee(shift * static_cast<float>(ln_2) + vector_log(z));
    core.output = lse;
}

// (Σ_k exps · V) / z as the core's output, the sum over the keys of the pattern's band only (with the
// query tile's granularity: keys outside every query's band of the tile have exps 0 or none at all).
// With bf16 weights (materialized_softmax made them), the keys in pairs and V packed in bf16 pairs, from
// V as stored (`stored_values`, bf16, where defined: no rounding to do) or rounded. kv_heads: V's head count.
inline void materialized_weighted_sum(MaterializedCore& core, const HeadGroup& group, const Tiles& tiles,
                                      const std::string& name, const Halide::Expr& kv_heads,
                                      const Halide::Func& stored_values = {}) {
    Halide::Var e("e"), q("q"), h("h"), b("b");
    Halide::Func acc(name + "_sum"), out(name);
    const Halide::Expr Lk = core.score_extents[0];
    if (core.rounded_weights.defined() && tiles.amx_products && core.head_width % amx_columns == 0 &&
        tiles.query_tile % amx_rows == 0 && (!core.band.causal || tiles.query_tile % amx_depth == 0)) {
        // On AMX tiles (lower/amx_tiles.hpp): steps of 32 keys, the last one's weights past Lk meeting zero values;
        // whole tiles of query rows. Under a causal band a query tile's band ends at a multiple of its size: of 32,
        // whole steps.
        const AmxValuePairs pairs =
            amx_value_pairs(stored_values, core.values, Lk, kv_heads, core.score_extents[3], amx_depth, name);
        core.value_pairs = pairs.values;
        core.amx_value_rows = pairs.rows;
        core.amx_weighted_sum = true;
        // By query tile, (e, qq, qt, h, b), so that the band bounds the steps by qt, outside the tiles.
        const int Qt = tiles.query_tile;
        Halide::Var qq("qq"), qt("qt");
        Halide::RDom r = amx_reduction((Lk + (amx_depth - 1)) / amx_depth, "r");
        restrict_to_block_band(r, amx_depth * r.y, qt * Qt, core.band, Qt, amx_depth);
        const Halide::Expr pair_index = amx_pair_index(r);
        Halide::Func tiled(name + "_tiled_sum");
        tiled(e, qq, qt, h, b) = 0.0f;
        tiled(e, qq, qt, h, b) +=
            pair_product(core.rounded_weights(amx_depth * r.y + r.x, qt * Qt + qq, h, b),
                         pairs.values(r.x % 2, e, pairs.row(pair_index, group.kv_head(h), b, kv_heads)));
        acc(e, q, h, b) = tiled(e, q % Qt, q / Qt, h, b);
        core.amx_sum = tiled;
    } else if (core.rounded_weights.defined()) {
        acc(e, q, h, b) = 0.0f;
        Halide::Var pair("pair"), k2("k2");
        const Halide::Expr key = 2 * k2 + pair, row = Halide::min(key, Lk - 1);
        core.value_pairs = Halide::Func(name + "_value_pairs");
        if (stored_values.defined())
            core.value_pairs(pair, e, k2, h, b) =
                Halide::select(key < Lk, stored_values(e, row, h, b), Halide::cast(Halide::BFloat(16), 0.0f));
        else
            core.value_pairs(pair, e, k2, h, b) =
                round_to_bf16(Halide::select(key < Lk, core.values(e, row, h, b), 0.0f));
        Halide::RDom r = pair_reduction(Lk, "r");
        restrict_to_block_band(r, 2 * r.y, q, core.band, tiles.query_tile, 1);  // whole pairs (causal)
        acc(e, q, h, b) += pair_product(core.rounded_weights(2 * r.y + r.x, q, h, b),
                                        core.value_pairs(r.x, e, r.y, group.kv_head(h), b));
    } else {
        acc(e, q, h, b) = 0.0f;
        Halide::RDom r(0, Lk, "r");
        restrict_to_block_band(r, r, q, core.band, tiles.query_tile, 1);
        acc(e, q, h, b) += core.exps(r, q, h, b) * core.values(e, r, group.kv_head(h), b);
    }
    const Halide::Expr z = core.row_sum(q, h, b);
    out(e, q, h, b) = ieee(Halide::select(z == 0.0f, 0.0f, acc(e, q, h, b) / z));
    core.weighted = acc;
    core.output = out;
}

}  // namespace attnforge::codegen::detail
