// The streaming core: online softmax over key tiles, softmax(S) · V without ever holding more than
// query_tile · key_tile scores. Fully masked rows give zero rows, never NaN (lower/materialized.hpp).
#pragma once

#include <attnforge/codegen/lower/amx_tiles.hpp>
#include <attnforge/codegen/lower/bf16_pairs.hpp>
#include <attnforge/codegen/lower/core_inputs.hpp>
#include <attnforge/codegen/lower/head_group.hpp>
#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/online_softmax.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace attnforge::codegen::detail {

// Online softmax over key blocks (the streaming strategy). Each block is normalized by its own max,
// then merged into the running state: m' = max(m, m_b), l' = l·e^(m-m') + l_b·e^(m_b-m'),
// acc' = acc·e^(m-m') + acc_b·e^(m_b-m'); the output is acc / l (0 when l = 0: every key masked).
// Queries are tiled in the algorithm itself (q = qt·query_tile + qi), so that the key blocks a tile
// needs under a causal or sliding-window mask are a range of the block loop that Halide bounds
// exactly: blocks wholly outside the band are never visited.
// bf16_values: V has a bf16 form (Lowered::stored: a bf16 input, or a projection a bf16 kernel rounds), so P·V
// may take bf16 pairs; kv_heads: V's head count.
inline void streamed_weighted_sum(StreamingCore& core, const HeadGroup& group, bool bf16_values,
                                  const Halide::Expr& kv_heads, const StreamingPlan& plan,
                                  const BlockRangeRead& block_ranges, const std::string& name) {
    using Halide::Expr;
    const int Kb = plan.key_tile, Qb = plan.query_tile;
    const Expr Lk = core.score_extents[0];
    Halide::Var kk("kk"), qi("qi"), qt("qt"), h("h"), b("b"), e("e"), kb("kb"), q("q"), pass("pass");
    const Expr key = kb * Kb + kk, query = qt * Qb + qi;
    const Expr inf = minus_infinity();
    // Where predicates fill blocks, the blocks are visited in two passes (below): the blocks they keep whole,
    // then the others. Every Func of a block then has the pass as its last index, a constant in each pass's
    // copy of the block loop (the schedule unrolls the passes), so that the first copy has no predicate left.
    const bool two_passes = core.full_block_scores.defined();
    std::vector<Halide::Var> row{qi, qt, h, b, kb};
    if (two_passes) row.push_back(pass);
    Expr score = core.scores(key, query, h, b);
    if (two_passes) score = Halide::select(pass == 0, core.full_block_scores(key, query, h, b), score);
    Halide::Func block_scores(name + "_block_scores");
    // Scores past Lk (the last block's tail) are masked out here; the score product and the mask inputs
    // read clamped, so the indices need no clamping (which would turn vector loads into gathers).
    block_scores(with_first(kk, row)) = ieee(Halide::select(key < Lk, score, inf));

    const bool value_pairs = plan.bf16_products && Kb % 2 == 0 && bf16_values;
    std::function<Expr(const Expr&)> value_of_key;
    if (!value_pairs)
        value_of_key = [&](const Expr& rk) {
            return core.values(e, Halide::min(kb * Kb + rk, Lk - 1), group.kv_head(h), b);
        };
    const KeyBlock block = key_block(name, block_scores, row, Kb, plan.lanes, e, value_of_key);
    std::tie(core.block_max, core.block_max_lanes, core.block_exps, core.block_sum, core.block_sum_lanes,
             core.block_weighted) =
        std::tie(block.max, block.max_lanes, block.exps, block.sum, block.sum_lanes, block.weighted);
    const bool amx_values = value_pairs && plan.amx_products && core.head_width % amx_columns == 0 &&
                            Kb % amx_depth == 0 && Qb % amx_rows == 0;
    if (amx_values) {
        // exps · V on AMX tiles (lower/amx_tiles.hpp), a key block in steps of 32: V packed once per call (zero
        // past Lk), the block's exps rounded to bf16 as below.
        const AmxValuePairs pairs =
            amx_value_pairs(Halide::Func(), core.values, Lk, kv_heads, core.score_extents[3], Kb, name);
        core.value_pairs = pairs.values;
        core.amx_value_rows = pairs.rows;
        core.amx_weighted_sum = true;
        core.rounded_weights = Halide::Func(name + "_rounded_weights");
        core.rounded_weights(with_first(kk, row)) = round_weight_to_bf16(block.exps(with_first(kk, row)));
        Halide::RDom r = amx_reduction(Kb / amx_depth, "r");
        const Halide::Expr pair_index = kb * (Kb / 2) + amx_pair_index(r);
        core.block_weighted = Halide::Func(name + "_block_weighted_tiles");
        core.block_weighted(with_first(e, row)) = 0.0f;
        core.block_weighted(with_first(e, row)) +=
            pair_product(core.rounded_weights(with_first(amx_depth * r.y + r.x, row)),
                         pairs.values(r.x % 2, e, pairs.row(pair_index, group.kv_head(h), b, kv_heads)));
        core.amx_sum = core.block_weighted;
    } else if (value_pairs) {
        // exps · V over pairs of keys (lower/bf16_pairs.hpp) where V has a bf16 form. The block's exps rounded to
        // bf16 (0 past Lk already: their scores are −∞), V packed once per call, zero past Lk.
        Halide::Var pair("pair"), k2("k2");
        const Expr pair_key = 2 * k2 + pair;
        core.value_pairs = Halide::Func(name + "_value_pairs");
        core.value_pairs(pair, e, k2, h, b) =
            round_to_bf16(Halide::select(pair_key < Lk, core.values(e, Halide::min(pair_key, Lk - 1), h, b), 0.0f));
        core.rounded_weights = Halide::Func(name + "_rounded_weights");
        core.rounded_weights(with_first(kk, row)) = round_weight_to_bf16(block.exps(with_first(kk, row)));
        Halide::RDom rk = pair_reduction(Kb, "rk");
        core.block_weighted = Halide::Func(name + "_block_weighted_bf16");
        core.block_weighted(with_first(e, row)) = 0.0f;
        core.block_weighted(with_first(e, row)) +=
            pair_product(core.rounded_weights(with_first(2 * rk.y + rk.x, row)),
                         core.value_pairs(rk.x, e, kb * (Kb / 2) + rk.y, group.kv_head(h), b));
    }

    // The merge over blocks, restricted to the blocks the tile's key band reaches (in positions: under a
    // cache the tile's queries sit offset(b) further), to the valid keys of a cache, to the blocks every
    // predicate can keep, and to the range of live blocks the pre-pass found (a kernel that takes its ranges).
    // In two passes (rb.y) where predicates fill blocks: the online softmax merges blocks in any order.
    const Expr blocks = (Lk + Kb - 1) / Kb;
    Halide::RDom rb = two_passes ? Halide::RDom(0, blocks, 0, 2, "rb") : Halide::RDom(0, blocks, "rb");
    const Expr key_tile = rb.x;
    const QueryPositions& pos = core.positions;
    if (core.band.causal) rb.where(key_tile * Kb <= qt * Qb + (Qb - 1) + pos.offset(b));
    if (core.band.windowed()) rb.where(key_tile * Kb + (Kb - 1) >= qt * Qb - core.band.window + pos.offset(b));
    if (pos.cached()) rb.where(key_tile * Kb < pos.lengths(b));
    // A key tile a predicate cannot keep for the whole query tile (its bounds over the block, from the
    // expression): a test per tile, not per pair. A key tile that every predicate that fills blocks keeps
    // whole is the first pass's, any other the second's.
    if (two_passes && std::none_of(core.run_time.block_truths.begin(), core.run_time.block_truths.end(),
                                   [](const auto& bounds) { return bounds.fills; }))
        throw std::logic_error("attnforge lowering: full-block scores without a predicate that fills blocks");
    if (!core.run_time.block_truths.empty()) {
        const PairBlock pairs{pos.position(qt * Qb, b), pos.position(qt * Qb + (Qb - 1), b), key_tile * Kb,
                              key_tile * Kb + (Kb - 1), h, b};
        Expr live = Halide::Internal::const_true(), full = Halide::Internal::const_true();
        for (const auto& bounds : core.run_time.block_truths) {
            if (!bounds.skips && !bounds.fills) continue;  // bounds that never skip nor fill: no test
            const BlockTruth truth = bounds.over(pairs);
            if (bounds.skips) live = live && truth.can_be_true;
            if (bounds.fills) full = full && !truth.can_be_false;
        }
        rb.where(live);
        if (two_passes) rb.where(Halide::select(rb.y == 0, full, !full));
    }
    if (block_ranges && !core.run_time.keeps.empty()) {
        const Expr hh = core.run_time.use_heads ? Expr(h) : Expr(0);
        rb.where(key_tile >= block_ranges(0, qt, hh, b));
        rb.where(key_tile <= block_ranges(1, qt, hh, b));
    }
    std::vector<Expr> at{qi, qt, h, b, key_tile};
    if (two_passes) at.push_back(rb.y);
    core.state = Halide::Func(name + "_state");
    core.state(e, qi, qt, h, b) = Halide::Tuple(inf, 0.0f, 0.0f);
    const Expr m_old = core.state(e, qi, qt, h, b)[0];
    const MergeFactors m = merge_factors(m_old, core.block_max(at));
    core.state(e, qi, qt, h, b) = Halide::Tuple(
        m.m_new, core.state(e, qi, qt, h, b)[1] * m.keep_old + core.block_sum(at) * m.take_block,
        core.state(e, qi, qt, h, b)[2] * m.keep_old + core.block_weighted(with_first(e, at)) * m.take_block);

    Halide::Func out(name);
    const Expr l = core.state(e, q % Qb, q / Qb, h, b)[1];
    out(e, q, h, b) = ieee(Halide::select(l == 0.0f, 0.0f, core.state(e, q % Qb, q / Qb, h, b)[2] / l));
    core.output = out;
}

// values: V as (e, k, h, b); pack_values: as CoreCommon's; bf16_values: as streamed_weighted_sum's.
inline StreamingCore streaming_attention(const CoreInputs& in, const Halide::Func& values, bool pack_values,
                                         bool bf16_values, const Halide::Expr& kv_heads, int head_width,
                                         const HeadGroup& group, const StreamingPlan& plan,
                                         const BlockRangeRead& block_ranges, const std::string& name) {
    StreamingCore core;
    fill_common(core, in);
    core.values = values;
    core.pack_values = pack_values;
    core.head_width = head_width;
    streamed_weighted_sum(core, group, bf16_values, kv_heads, plan, block_ranges, name);
    return core;
}

}  // namespace attnforge::codegen::detail
