// apply_schedule and plan_for (schedules/schedule.hpp): the roles of a lowered graph scheduled one by one, each
// attention core by the schedule of its strategy (src/schedules/).
#include "schedules/parts.hpp"

#include <map>
#include <variant>

namespace attnforge::codegen {

using namespace schedules;

void schedule_live_key_blocks(const LiveKeyBlocks& live, Func out, int lanes) {
    const std::vector<Var> o = out.args();  // (i, qt, h, b)
    Var hb("hb"), tile("tile");
    out.compute_root().fuse(o[2], o[3], hb).fuse(o[1], hb, tile).parallel(tile);
    // Per (qt, h, b): its blocks, then its range over them.
    Func blocks = live.blocks, rows = live.rows, ranges = live.ranges;
    ranges.compute_at(out, tile);
    blocks.compute_at(out, tile);
    const std::vector<Var> r = rows.args();  // (q, kb, h, b)
    rows.compute_at(out, tile).vectorize(r[0], lanes, TailStrategy::RoundUp);
    rows.update().reorder(r[0], rows.rvars(0).at(0), r[1]).vectorize(r[0], lanes, TailStrategy::RoundUp);
}

int vector_lanes(const Knobs& knobs, const Halide::Target& target) {
    return knobs.vector_width > 0 ? knobs.vector_width : target.natural_vector_size<float>();
}

AlgorithmPlan plan_for(const Knobs& knobs, const Halide::Target& target) {
    Tiles tiles;
    tiles.lanes = vector_lanes(knobs, target);
    tiles.query_tile = knobs.q_block;
    tiles.key_panel = knobs.k_unroll * tiles.lanes;
    tiles.projection_columns = knobs.proj_cols * tiles.lanes;
    if (knobs.strategy == Strategy::streaming) {
        StreamingPlan plan{tiles};
        plan.key_tile = knobs.k_block;
        return plan;
    }
    if (knobs.strategy == Strategy::decode) {
        DecodePlan plan{tiles};
        plan.key_tile = knobs.k_block;
        plan.split_keys = knobs.split_keys;
        plan.query_rows = knobs.q_rows;
        // With vectors of 8 lanes (AVX2: 16 registers) a GQA group's P·V takes several tiles of columns, each
        // re-reading the key tile's V: past 512 keys of E = 128 float32 that leaves L2. Measured with that loop
        // structure on Zen 4 (vector_width=8), decode_gqa tiles of 2048 against 512: 1.1-1.4x slower. So the
        // large tiles the kernel list gives AVX-512 become tiles of 512 there (a multiple of 512 only, so that
        // split_keys, a multiple of k_block, stays a whole number of tiles).
        if (tiles.lanes < 16 && plan.key_tile > 512 && plan.key_tile % 512 == 0) plan.key_tile = 512;
        return plan;
    }
    MaterializedPlan plan{tiles};
    plan.skip_band_panels = knobs.strategy == Strategy::materialized;
    return plan;
}

void apply_schedule(const Roles& roles, const PipelineOutput& output, const AlgorithmPlan& plan, const Knobs& knobs) {
    if (knobs.strategy == Strategy::unscheduled) return;
    const Tiles& tiles = codegen::tiles(plan);
    const int lanes = tiles.lanes;
    bool output_owned = false;
    // The loop nest a role's result is computed in: its own Func at root, tiles rounded up (reads are
    // clamped, extra rows never consumed); or, when the pipeline output is that very Func, the output
    // itself, so that the result is written once, straight into the caller's buffer (a copy cost
    // 5–12% of sdpa at L ≤ 512), its tails guarded.
    auto owner_of = [&](Func result) -> Owner {
        if (output.same_indices && result.function().same_as(output.result.function())) {
            result.compute_inline();
            output_owned = true;
            return {output.func, TailStrategy::GuardWithIf};
        }
        return {result, TailStrategy::RoundUp};
    };
    std::map<std::pair<std::string, int>, Func> first_projection_of;  // by input and width
    for (const Projection& p : roles.projections) {
        const Owner owner = owner_of(p.output);
        const Var parallel_loop = schedule_matrix_product(owner, p.sum, tiles, knobs, p.bf16_pairs, p.amx_tiles);
        // Projections of the same input and width (Q, K and V of one x) in one loop nest: one fork/join
        // of the thread pool instead of three. Their parallel loops fuse panels with batch entries, so
        // only products with the same panel count share one (GQA's narrower K and V share theirs).
        if (!knobs.proj_fused || p.input.empty() || !owner.func.function().same_as(p.output.function())) continue;
        auto [first, inserted] = first_projection_of.try_emplace({p.input, p.columns}, p.output);
        if (!inserted) Func(p.output).compute_with(first->second, parallel_loop);
    }
    for (const AttentionCore& core : roles.cores) {
        const Owner owner = owner_of(common(core).output);
        std::visit([&](const auto& c) { schedule_core(c, owner, tiles, knobs); }, core);
        // An attention output inside the pipeline (e, q, h, b) is stored with the heads of one query
        // together, (e, h, q, b): the merged heads (D, L, B) that an output projection reads, each of its
        // rows one dense run of D floats.
        Func out = owner.func;
        const std::vector<Var> a = out.args();
        if (!out.function().same_as(output.func.function()) && a.size() == 4)
            out.reorder_storage(a[0], a[2], a[1], a[3]);
    }
    for (RowOperation op : roles.row_operations) {
        // Rows in parallel; each row's statistics computed just before the row.
        Func f = owner_of(op.output).func;
        const std::vector<Var> a = f.args();  // (d, l, b)
        Var row("row");
        f.compute_root().fuse(a[1], a[2], row).parallel(row).vectorize(a[0], lanes, TailStrategy::GuardWithIf);
        for (Func s : op.statistics) s.compute_at(f, row);
        for (auto [total, per_lane] : op.reductions)
            reduce_row_by_lanes(total, per_lane, Halide::LoopLevel(f, row), lanes);
    }
    for (Func f : roles.tables) f.compute_root().parallel(f.args().back());
    for (Func f : roles.distance_tables) {
        // (d, h, b): a row per head and batch entry, vectorized along the distances.
        const std::vector<Var> a = f.args();
        Var rows("rows");
        f.compute_root().fuse(a[1], a[2], rows).parallel(rows).vectorize(a[0], lanes, TailStrategy::GuardWithIf);
    }
    // The bf16 copies of projections over pairs, once per call: rows (i, l, b) or heads (e, h, l, b), in parallel
    // over l; weights (pair, o, i/2) as two dense vectors of W's rows 2·(i/2) and 2·(i/2) + 1 stored interleaved
    // (the pair unrolled inside a vector of o: Halide fuses the two strided stores into one interleaving store;
    // vectorized along (pair, o) instead, it loaded each pair by a 2-lane gather: 9 % of bf16 self_attention_layer
    // at L = 512).
    for (Func f : roles.bf16_rows) {
        const std::vector<Var> a = f.args();
        f.compute_root().parallel(a[a.size() - 2]).vectorize(a[0], lanes, TailStrategy::GuardWithIf);
    }
    for (Func f : roles.bf16_weight_pairs) {
        const std::vector<Var> a = f.args();
        Var oo("oo"), oi("oi");
        f.compute_root()
            .bound(a[0], 0, 2)
            .split(a[1], oo, oi, lanes, TailStrategy::RoundUp)
            .reorder(oi, a[0], oo, a[2])
            .vectorize(oi)
            .unroll(a[0])
            .parallel(a[2]);
    }
    for (Func f : roles.float32_weights) {  // (o, i): rows of W in parallel
        const std::vector<Var> a = f.args();
        f.compute_root().parallel(a[1]).vectorize(a[0], lanes, TailStrategy::RoundUp);
    }
    for (Func f : roles.elementwise) {
        // Rows in parallel over the outer dimensions, vectorized along the innermost.
        Func g = owner_of(f).func;
        const std::vector<Var> a = g.args();
        Var rows("rows");
        g.compute_root();
        if (a.size() >= 3) {
            g.fuse(a[1], a[2], rows);
            for (std::size_t d = 3; d < a.size(); ++d) g.fuse(rows, a[d], rows);
            g.parallel(rows);
        }
        g.vectorize(a[0], lanes, TailStrategy::GuardWithIf);
    }
    if (output_owned) return;
    // The output: a copy of the last role's result, parallel over its outermost dimension.
    Func copy = output.func;
    const std::vector<Var> o = copy.args();
    copy.compute_root().vectorize(o[0], lanes, TailStrategy::GuardWithIf);
    if (o.size() > 1) copy.parallel(o.back());
}

}  // namespace attnforge::codegen
