// The materialized strategy's schedule (lower/materialized.hpp): per task (query tile, head, batch entry)
// the tile's scores, their row max, exps and sum, then P·V in register tiles.
#include "parts.hpp"

#include <algorithm>

namespace attnforge::codegen::schedules {

void schedule_core(MaterializedCore core, const Owner& owner, const Tiles& tiles, const Knobs& k) {
    Func out = owner.func;
    const int lanes = tiles.lanes;
    Var qi("qi"), t("t");
    if (out.dimensions() == 3)
        parallel_row_blocks(owner, t, tiles);  // the log-sum-exp of each row
    else
        parallel_query_blocks(owner, qi, t, tiles);
    schedule_score_product(core, Halide::LoopLevel(out, t), Halide::LoopLevel(out, t), tiles, k);
    reduce_row_by_lanes(core.row_max, core.row_max_lanes, Halide::LoopLevel(out, t), lanes);
    // The exps, or the exps with their bf16 roundings for a P·V over pairs (exps and rounded_weights then
    // read the Tuple's two buffers, inlined)
    Func exps = core.exps_and_weights.defined() ? core.exps_and_weights : core.exps;
    exps.compute_at(out, t).vectorize(exps.args()[0], lanes, TailStrategy::RoundUp);
    if (core.rounded_weights.defined() && !core.exps_and_weights.defined()) {  // banded exps: a pass of their own
        Func weights = core.rounded_weights;
        weights.compute_at(out, t).vectorize(weights.args()[0], lanes, TailStrategy::RoundUp);
    }
    if (core.banded_exps) {
        RVar ro("ro"), ri("ri");
        core.exps.update().split(core.exps.rvars(0).at(0), ro, ri, lanes, TailStrategy::GuardWithIf).vectorize(ri);
    }
    reduce_row_by_lanes(core.row_sum, core.row_sum_lanes, Halide::LoopLevel(out, t), lanes);
    if (!core.weighted.defined()) return;
    pack_values(core, lanes);
    if (core.amx_weighted_sum) {  // P·V on AMX tiles: all of E × the query tile, each over every key step
        if (core.exps_and_weights.defined()) {
            // P's rows (its tile's rows) stored one step of 32 keys further apart than whole steps: at a multiple
            // of 4 KiB (Lk = 2048) a tile's 16 rows would all fall into one L1 set. (No gain measured on the one
            // AMX machine tried, within its noise.)
            const Halide::Expr Lk = core.score_extents[0];
            core.exps_and_weights.bound_storage(core.exps_and_weights.args()[0], (Lk + 31) / 32 * 32 + 32);
        }
        amx_tile_product(core.amx_sum, Halide::LoopLevel(out, t), 1);  // (e, qq, qt, h, b)
        return;
    }
    const bool pairs = core.value_pairs.defined();
    if (k.pv_key_block > 0) {
        // P·V over key chunks: for each chunk of pv_key_block keys, every register tile (pv_unroll rows ×
        // all of E) of the block accumulates that chunk, so the chunk of V (pv_key_block · E floats)
        // is read from L1 by every tile. The block's accumulators (q_block × E) live in L1 between
        // chunks. Without chunks each tile streams all of V from L2: 16 bytes per FMA, more than L2
        // delivers on a core with two 512-bit FMA ports.
        Func acc = core.weighted;
        const std::vector<Var> s = acc.args();  // (e, q, h, b)
        acc.compute_at(out, t).vectorize(s[0], lanes, TailStrategy::RoundUp);
        const std::vector<RVar> r = acc.rvars(0);  // (k), or (pair, k/2)
        RVar ro("ro"), ri("ri");
        Var eo("eo"), ei("ei"), eg("eg"), eu("eu"), qg("qg"), qu("qu");
        Halide::Stage update = acc.update();
        update
            .split(r.back(), ro, ri, pairs ? std::max(1, k.pv_key_block / 2) : k.pv_key_block,
                   TailStrategy::GuardWithIf)
            .split(s[0], eo, ei, lanes, TailStrategy::RoundUp)
            .split(s[1], qg, qu, k.pv_unroll, TailStrategy::RoundUp);
        const Var tile_e = split_value_columns(update, eo, eg, eu, k, core.head_width, lanes);
        update.reorder(value_tile_order(pairs ? &r[0] : nullptr, ei, tile_e, qu, ri, tile_e.same_as(eu) ? &eg : nullptr,
                                        {qg, ro}));
        if (pairs) update.atomic().vectorize(r[0]);
        update.vectorize(ei).unroll(tile_e).unroll(qu);
        return;
    }
    // P·V register tiles: pv_unroll rows × all of E, accumulated over every key.
    Var wo("wo"), wi("wi");
    out.split(qi, wo, wi, k.pv_unroll, owner.tail).unroll(wi);
    register_tile_accumulator(core.weighted, Halide::LoopLevel(out, wo), lanes,
                              (core.head_width + lanes - 1) / lanes * lanes, k.pv_unroll, pairs);
}

}  // namespace attnforge::codegen::schedules
