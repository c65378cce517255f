// The block-mask pre-pass: which key tiles of each query tile hold a pair that every run-time mask keeps,
// computed by a kernel of its own (result=block_ranges) before the streaming kernel that skips the rest.
#pragma once

#include <attnforge/codegen/lowering.hpp>

namespace attnforge::codegen::detail {

// The pre-pass of block-masked kernels: for each query tile qt (query_tile queries) the first and the last
// key tile (key_tile keys) holding a pair that every run-time mask keeps, ranges(i, qt, h, b) with
// i = 0 first, 1 last (first > last: none, the tile's rows are all masked); h is 0 when no mask reads
// it. Reduced in three steps: over each block's keys per query (vectorized along queries), over the
// tile's queries, then over the blocks.
inline LiveKeyBlocks live_key_blocks(const CoreCommon& core, const StreamingPlan& plan) {
    using Halide::Expr;
    const int Kb = plan.key_tile, Qb = plan.query_tile;
    const Expr Lk = core.score_extents[0], Lq = core.score_extents[1];
    Halide::Var q("q"), kb("kb"), qt("qt"), h("h"), b("b"), i("i");
    LiveKeyBlocks live{Halide::Func("live_rows"), Halide::Func("live_blocks"), Halide::Func("block_ranges")};
    Halide::RDom rk(0, Kb, "rk");
    const Expr key = kb * Kb + rk;
    Expr kept = key < Lk && q < Lq;
    for (const Halide::Func& keep : core.run_time.keeps) kept = kept && keep(key, q, h, b);
    live.rows(q, kb, h, b) = Halide::cast<uint8_t>(0);
    live.rows(q, kb, h, b) = Halide::max(live.rows(q, kb, h, b), Halide::cast<uint8_t>(kept));
    Halide::RDom rq(0, Qb, "rq");
    live.blocks(kb, qt, h, b) = Halide::cast<uint8_t>(0);
    live.blocks(kb, qt, h, b) = Halide::max(live.blocks(kb, qt, h, b), live.rows(qt * Qb + rq, kb, h, b));
    const Expr count = (Lk + Kb - 1) / Kb;
    Halide::RDom rb(0, count, "rb");
    const Expr is_live = live.blocks(rb, qt, h, b) != 0;
    live.ranges(i, qt, h, b) = Halide::select(i == 0, count, -1);
    live.ranges(i, qt, h, b) =
        Halide::select(i == 0, Halide::min(live.ranges(i, qt, h, b), Halide::select(is_live, rb, count)),
                       Halide::max(live.ranges(i, qt, h, b), Halide::select(is_live, rb, -1)));
    return live;
}

}  // namespace attnforge::codegen::detail
