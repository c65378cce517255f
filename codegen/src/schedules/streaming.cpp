// The streaming strategy's schedule (lower/streaming.hpp): per task (query tile, head, batch entry) the online
// softmax over key tiles, everything of a tile computed inside the tile loop.
#include "parts.hpp"

namespace attnforge::codegen::schedules {

void schedule_core(StreamingCore core, const Owner& owner, const Tiles& tiles, const Knobs& k) {
    Func out = owner.func;
    const int lanes = tiles.lanes;
    Var qi("qi"), t("t");
    parallel_query_blocks(owner, qi, t, tiles);  // matches the algorithm's query tiles exactly
    Func state = core.state;
    const std::vector<Var> s = state.args();  // (e, qi, qt, h, b)
    state.compute_at(out, t).vectorize(s[0], lanes, TailStrategy::RoundUp);
    const std::vector<RVar> passes_and_blocks = state.rvars(0);  // (block) or (block, pass)
    const RVar rb = passes_and_blocks.at(0);
    if (passes_and_blocks.size() == 1) {
        state.update().reorder(s[0], s[1], rb);
    } else {
        // The passes over the blocks (lower/streaming.hpp) outermost and unrolled: in the first copy the
        // pass is 0, and the predicates that fill blocks are gone from its scores.
        const RVar pass = passes_and_blocks[1];
        state.update().reorder(s[0], s[1], rb, pass).unroll(pass);
    }
    state.update().vectorize(s[0], lanes, TailStrategy::RoundUp);

    // Everything of one key block is computed inside the block loop.
    schedule_score_product(core, Halide::LoopLevel(state, rb), Halide::LoopLevel(out, t), tiles, k);
    pack_values(core, lanes);
    reduce_row_by_lanes(core.block_max, core.block_max_lanes, Halide::LoopLevel(state, rb), lanes);
    core.block_exps.compute_at(state, rb).vectorize(core.block_exps.args()[0], lanes, TailStrategy::RoundUp);
    reduce_row_by_lanes(core.block_sum, core.block_sum_lanes, Halide::LoopLevel(state, rb), lanes);
    if (core.amx_weighted_sum) {  // exps · V on AMX tiles: all of E × the query tile, over the block's steps
        Func weights = core.rounded_weights;
        weights.compute_at(state, rb).vectorize(weights.args()[0], lanes, TailStrategy::RoundUp);
        amx_tile_product(core.amx_sum, Halide::LoopLevel(state, rb), 1);  // (e, qi, qt, h, b, kb[, pass])
        return;
    }
    Func acc = core.block_weighted;
    const std::vector<Var> w = acc.args();  // (e, qi, qt, h, b, kb)
    acc.compute_at(state, rb).vectorize(w[0], lanes, TailStrategy::RoundUp);
    const std::vector<RVar> r = acc.rvars(0);  // (k), or (pair, k/2)
    Var eo("eo"), ei("ei"), eg("eg"), eu("eu"), qg("qg"), qu("qu");
    Halide::Stage update = acc.update();
    update.split(w[0], eo, ei, lanes, TailStrategy::RoundUp).split(w[1], qg, qu, k.pv_unroll, TailStrategy::RoundUp);
    const bool pairs = core.value_pairs.defined();
    const Var tile_e = split_value_columns(update, eo, eg, eu, k, core.head_width, lanes);
    update.reorder(value_tile_order(pairs ? &r[0] : nullptr, ei, tile_e, qu, pairs ? r[1] : r[0],
                                    tile_e.same_as(eu) ? &eg : nullptr, {qg}));
    if (pairs) {
        Func weights = core.rounded_weights;
        weights.compute_at(state, rb).vectorize(weights.args()[0], lanes, TailStrategy::RoundUp);
        update.atomic().vectorize(r[0]);
    }
    update.vectorize(ei).unroll(tile_e).unroll(qu);
}

}  // namespace attnforge::codegen::schedules
