// The decode core (DecodePlan, plan.hpp): flash-decoding over a key cache. Per task (split s, KV head
// hk, batch entry b): the online softmax over the split's key tiles for every query and every query
// head of the group at once, so K and V are read once per KV head; then the splits merged by their
// log-sum-exp. Key tiles past the cache's valid length (and outside a band, in positions) are never
// visited: their condition reads the lengths input and becomes the tile loop's bound. Fully masked
// rows give zero rows, never NaN.
#pragma once

#include <attnforge/codegen/lower/bf16_pairs.hpp>
#include <attnforge/codegen/lower/core_inputs.hpp>
#include <attnforge/codegen/lower/head_group.hpp>
#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/integer_values.hpp>
#include <attnforge/codegen/lower/online_softmax.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace attnforge::codegen::detail {

// value_scale, where V's rows have a factor of their own (KeyValueSource::row_scale: `values` are then unscaled),
// weighs each key's exp by its row's factor before P·V (one multiply a key, not one an element). value_span: P·V's
// keys in spans of that many (DecodeCore::value_span; not over bf16 pairs, which pair their keys instead, nor where
// the key tile is not a whole number of spans: there V goes unprefetched). value_zero, where V's rows are uint8 codes
// less a zero point of their own: `values` are then the codes as they are, and the zero point leaves the product
// whole, Σ w·(u − zero) = Σ w·u − Σ w·zero, the second sum one lane reduction over the tile's weights
// (DecodeCore::block_zero_sum) subtracted once per tile and row: one vector subtraction per 16 codes fewer in the
// loop that multiplies every code (P·V of four rows at E = 64: 24 instead of 28 vector instructions a key). The
// float32 sums over a tile's ≤ 2048 keys hold terms up to 255·w·scale where the products had up to ~128·w·scale:
// about twice their rounding, within §5's 1e-4 (docs/storage_types.md). value_codes, where V's rows are 8-bit codes
// with a factor and a zero point (128 for int8) of their own and the target has integer dot products
// (DecodePlan::integer_products): V's unsigned codes, and P·V runs on them (lower/integer_values.hpp).
inline DecodeCore decode_attention(
    const CoreInputs& in, const Halide::Func& values, const Halide::Func& stored_values,
    const std::function<Halide::Expr(const Halide::Expr&, const Halide::Expr&, const Halide::Expr&)>& value_scale,
    int head_width, const HeadGroup& heads, const DecodePlan& plan, const std::string& name, int value_span = 1,
    const std::function<Halide::Expr(const Halide::Expr&, const Halide::Expr&, const Halide::Expr&)>& value_zero = {},
    const std::function<Halide::Expr(const Halide::Expr&, const Halide::Expr&, const Halide::Expr&, const Halide::Expr&)>&
        value_codes = {}) {
    using Halide::Expr;
    DecodeCore core;
    fill_common(core, in);
    core.values = values;
    core.converted_values = static_cast<bool>(value_scale);
    core.head_width = head_width;
    // A task is a KV head hk's: a fixed group's heads g together (h = hk · group + g); a run-time group's heads as
    // query rows q (query q % Lq of head hk · group + q / Lq, g of extent 1), so that the schedule takes several of
    // them inside the keys as it takes a head's several queries. Either way K and V are read once per KV head.
    const int group = heads.fixed;
    core.group = group;
    const int Kt = plan.key_tile, T = plan.split_keys / plan.key_tile;
    const Expr Lk = core.score_extents[0], Lq = core.score_extents[1];
    const bool rows_of_group = heads.runtime.defined();
    core.rows = heads.rows(Lq);
    Halide::Var kk("kk"), q("q"), g("g"), hk("hk"), b("b"), kb("kb"), e("e"), s("s"), h("h");
    const Expr key = kb * Kt + kk;
    const Expr query = heads.query_of_row(q, Lq);
    const Expr head = rows_of_group ? heads.head_of_row(hk, q, Lq) : hk * group + g;
    const Expr kv_head = hk;  // where the task's K and V rows are
    const Expr inf = minus_infinity();

    // One key tile: its scores (past Lk masked; the product reads clamped), max, exps, sum and exps · V.
    core.block_scores = Halide::Func(name + "_block_scores");
    core.block_scores(kk, q, g, hk, b, kb) = ieee(Halide::select(key < Lk, core.scores(key, query, head, b), inf));
    const bool value_pairs = stored_values.defined() && Kt % 2 == 0;
    if (value_pairs && value_scale)  // pairs read V as stored: no row factor to weigh by
        throw std::invalid_argument("attnforge lowering: V rows with a factor of their own have no bf16 form to pair");
    // Key rk of tile kb, clamped into the cache: what V's rows and their scales and zero points are read at.
    auto cache_key = [&](const Expr& rk) { return Halide::min(kb * Kt + rk, Lk - 1); };
    // The same for V's per-key factors, read in vectors of the tile's keys, around likely() as K's
    // (lower/decode_product.hpp, per_key_index).
    auto factor_key = [&](const Expr& rk) { return Halide::min(Halide::likely(kb * Kt + rk), Lk - 1); };
    std::function<Expr(const Expr&)> value_of_key;
    if (!value_pairs) value_of_key = [&](const Expr& rk) { return core.values(e, cache_key(rk), kv_head, b); };
    // The keys of tile kb below Lk and the cache's valid length: the tile's loops end there, so the last tile of
    // a short cache computes and reads no more keys than it holds (a large tile costs nothing there).
    const QueryPositions& pos = core.positions;
    const Expr valid = pos.cached() ? Halide::min(Lk, pos.lengths(b)) : Lk;
    const Expr tile_keys = Halide::clamp(valid - kb * Kt, 0, Kt);
    std::function<Expr(const Expr&)> weight_of_key;
    if (value_scale)
        weight_of_key = [&](const Expr& rk) { return value_scale(factor_key(rk), kv_head, b); };
    if (!value_pairs && Kt % value_span == 0) core.value_span = value_span;
    const KeyBlock block = key_block(name, core.block_scores, {q, g, hk, b, kb}, Kt, plan.lanes, e, value_of_key,
                                     tile_keys, weight_of_key, core.value_span);
    if (value_zero) {
        if (!block.weights.defined())
            throw std::invalid_argument("attnforge lowering: a zero point folded out of P·V needs V's row scales");
        Halide::Var kz("kz");
        Halide::Func zero_terms(name + "_block_zero_terms");
        zero_terms(kz, q, g, hk, b, kb) =
            block.weights(kz, q, g, hk, b, kb) * value_zero(factor_key(kz), kv_head, b);
        std::tie(core.block_zero_sum, core.block_zero_sum_lanes) = reduce_by_lanes(
            name + "_block_zero_sum", lane_sum(), zero_terms, Kt, {q, g, hk, b, kb}, q, {}, 1, plan.lanes, tile_keys);
    }
    std::tie(core.block_max, core.block_max_lanes, core.block_exps, core.block_sum, core.block_sum_lanes,
             core.block_weighted, core.block_weights) =
        std::tie(block.max, block.max_lanes, block.exps, block.sum, block.sum_lanes, block.weighted, block.weights);
    if (value_codes) {
        if (!block.weights.defined() || !core.block_zero_sum.defined())
            throw std::invalid_argument("attnforge lowering: P·V over codes needs V's row scales and zero points");
        const Expr last_valid = Halide::max(valid - 1, 0);
        const IntegerValues integer = integer_weighted_values(
            name, block.weights, {q, g, hk, b, kb}, Kt, plan.lanes, e,
            [&](const Expr& column, const Expr& rk) {
                return value_codes(column, Halide::min(kb * Kt + rk, last_valid), kv_head, b);
            },
            tile_keys);
        // Four rows or more keep float32 P·V (its four-row register tile loads each converted V vector once for the
        // four; over digits each row takes three vpdpbusd a vector, and the accumulators leave two columns a tile),
        // fewer take the integer one: one weighted sum, the schedule specializing the state on the row count.
        const Expr integer_rows = core.rows < integer_values_below_rows;
        Halide::Func either(name + "_block_weighted_of_either");
        either(e, q, g, hk, b, kb) = Halide::select(integer_rows, integer.weighted(e, q, g, hk, b, kb),
                                                    block.weighted(e, q, g, hk, b, kb));
        core.block_weighted = either;
        core.integer_values = {integer.weight_max, integer.weight_max_lanes, integer.weight_digits, integer.sums,
                               block.weighted, integer_rows};
    }
    if (value_pairs) {
        // bf16 V as stored (its own input): exps · V over pairs of keys, one vdpbf16ps per 16 columns and
        // pair, the pair's two V rows interleaved in registers (no packing of the cache). P is rounded to
        // bf16 after its sum adds the float32 exps, as the prefill strategies do (docs/storage_types.md).
        core.rounded_weights = Halide::Func(name + "_rounded_weights");
        core.rounded_weights(kk, q, g, hk, b, kb) = round_weight_to_bf16(core.block_exps(kk, q, g, hk, b, kb));
        Halide::RDom rk = pair_reduction(Kt, "rk");
        rk.where(2 * rk.y < tile_keys);  // a pair's second key past them has weight 0 (its score is masked)
        // Each key of the pair clamped on its own, selected by the pair's element: two dense row loads that
        // interleave (a clamp of the element's key itself would make the load a gather). Clamped to the valid
        // keys: the second key of the last pair of an odd count re-reads the row before it (weight 0) rather
        // than the cache past its length, which may hold anything (a NaN there would make 0 · NaN).
        const Expr first = kb * Kt + 2 * rk.y, last_valid = Halide::max(valid - 1, 0);
        const Expr value = Halide::select(rk.x == 0, stored_values(e, Halide::min(first, last_valid), kv_head, b),
                                          stored_values(e, Halide::min(first + 1, last_valid), kv_head, b));
        core.block_weighted = Halide::Func(name + "_block_weighted_pairs");
        core.block_weighted(e, q, g, hk, b, kb) = 0.0f;
        core.block_weighted(e, q, g, hk, b, kb) +=
            pair_product(core.rounded_weights(2 * rk.y + rk.x, q, g, hk, b, kb), value);
    }

    // The state of split s: its tiles kb = s·T + rb, those that exist, hold valid keys and reach the
    // band of some query (query 0 sits lowest, query Lq − 1 highest).
    Halide::RDom rb(0, T, "rb");
    const Expr tile = s * T + rb;
    rb.where(tile * Kt < Lk);
    if (pos.cached()) rb.where(tile * Kt < pos.lengths(b));
    if (core.band.causal) rb.where(tile * Kt <= Lq - 1 + pos.offset(b));
    if (core.band.windowed()) rb.where(tile * Kt + (Kt - 1) >= pos.offset(b) - core.band.window);
    core.state = Halide::Func(name + "_state");
    core.state(e, q, g, hk, b, s) = Halide::Tuple(inf, 0.0f, 0.0f);
    const MergeFactors m = merge_factors(core.state(e, q, g, hk, b, s)[0], core.block_max(q, g, hk, b, tile));
    Expr weighted = core.block_weighted(e, q, g, hk, b, tile);
    if (core.block_zero_sum.defined()) weighted = ieee(weighted - core.block_zero_sum(q, g, hk, b, tile));
    core.state(e, q, g, hk, b, s) =
        Halide::Tuple(m.m_new, core.state(e, q, g, hk, b, s)[1] * m.keep_old + core.block_sum(q, g, hk, b, tile) * m.take_block,
                      core.state(e, q, g, hk, b, s)[2] * m.keep_old + weighted * m.take_block);

    // The splits merged: M = max of their maxima, l = Σ l_s·2^(m_s − M), acc = Σ acc_s·2^(m_s − M).
    // Query q of head h: its KV head's task, its row (and head of a fixed group) there.
    Halide::RDom rs(0, (Lk + plan.split_keys - 1) / plan.split_keys, "rs");
    const Expr hk_of = heads.kv_head(h), row_of = heads.row_of(h, q, Lq);
    const Expr g_of = rows_of_group ? Expr(0) : h % group;
    auto state_of = [&](const Expr& column) { return core.state(column, row_of, g_of, hk_of, b, rs); };
    core.split_max = Halide::Func(name + "_split_max");
    core.split_max(q, h, b) = inf;
    core.split_max(q, h, b) = Halide::max(core.split_max(q, h, b), state_of(0)[0]);
    const Expr m_split = state_of(0)[0], top = core.split_max(q, h, b);
    const Expr factor = ieee(Halide::select(m_split == inf, 0.0f, softmax_exp2(m_split - top)));
    core.merged = Halide::Func(name + "_merged");
    core.merged(e, q, h, b) = Halide::Tuple(0.0f, 0.0f);
    core.merged(e, q, h, b) = Halide::Tuple(core.merged(e, q, h, b)[0] + state_of(e)[1] * factor,
                                            core.merged(e, q, h, b)[1] + state_of(e)[2] * factor);
    Halide::Func out(name);
    const Expr l = core.merged(e, q, h, b)[0];
    out(e, q, h, b) = ieee(Halide::select(l == 0.0f, 0.0f, core.merged(e, q, h, b)[1] / l));
    core.output = out;
    return core;
}

}  // namespace attnforge::codegen::detail
