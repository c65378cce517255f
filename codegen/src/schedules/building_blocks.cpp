// The pieces the strategies' schedules share (parts.hpp): register tiles of products, the P·V tiles, the
// query tiles and tasks of the prefill strategies, and packing K and V.
#include "parts.hpp"

#include <algorithm>

namespace attnforge::codegen::schedules {

// A row reduction the algorithm splits by lanes (lower/attention.hpp, reduce_by_lanes): the lanes'
// partial results in one vector, computed just before their row, which combines them in a tree.
void reduce_row_by_lanes(Func row, Func per_lane, const Halide::LoopLevel& level, int lanes) {
    row.compute_at(level);
    const Var u = per_lane.args().at(0);
    per_lane.compute_at(row, row.args().at(0)).vectorize(u, lanes);
    for (int i = 0; i < per_lane.num_update_definitions(); ++i) per_lane.update(i).vectorize(u, lanes);
}

// The accumulator of a register tile: `sum` (columns, rows, ...) computed at `level` over a whole tile,
// columns in vectors, every loop of the tile unrolled, the reduction outermost, so that the
// accumulators stay in registers for the whole reduction.
// The region computed is always the whole tile (bound_extent; every read is clamped), even where a
// guarded output tile requires less at the edges: a fixed-size local (a heap allocation per tile
// otherwise), and unrolled rows with no "is this row inside?" test in the reduction loop (the guarded
// output projection of mha tested its row count twice per step: 183 vs 210 GFLOP/s).
// A reduction over bf16 pairs (lower/bf16_pairs.hpp: its first reduction variable is the pair's element)
// puts that variable innermost, vectorized with atomic(): each vector of the tile is one vdpbf16ps.
void register_tile_accumulator(Func sum, const Halide::LoopLevel& level, int lanes, int columns, int rows,
                               bool pairs) {
    const std::vector<Var> s = sum.args();
    sum.compute_at(level)
        .bound_extent(s[0], columns)
        .bound_extent(s[1], rows)
        .vectorize(s[0], lanes, TailStrategy::RoundUp)
        .unroll(s[1]);
    Var so("so"), si("si");
    const std::vector<RVar> r = sum.rvars(0);
    std::vector<Halide::VarOrRVar> order;
    if (pairs) order.emplace_back(r.at(0));
    for (const Halide::VarOrRVar& v : {Halide::VarOrRVar(si), Halide::VarOrRVar(so), Halide::VarOrRVar(s[1])})
        order.push_back(v);
    for (std::size_t i = pairs ? 1 : 0; i < r.size(); ++i) order.emplace_back(r[i]);  // outside the tile
    Halide::Stage update = sum.update();
    update.split(s[0], so, si, lanes, TailStrategy::RoundUp).reorder(order);
    if (pairs) update.atomic().vectorize(r.at(0));
    update.vectorize(si).unroll(so).unroll(s[1]);
}

// An AMX tile product `sum` (first argument the tile's columns, argument rows_arg its rows, its reduction (32
// values, steps):
// lower/amx_tiles.hpp): a copy of it computed at `level` in 16 × 16 tiles, each tile's accumulator in a tile
// register (MemoryType::AMXTile) over every step. Returns the copy, which the consumers read.
Func amx_tile_product(Func sum, const Halide::LoopLevel& level, int rows_arg) {
    Func tiles = sum.in();
    const std::vector<Var> a = tiles.args();
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    tiles.compute_at(level)
        .tile(a[0], a[rows_arg], xo, yo, xi, yi, amx_tile_columns, amx_tile_rows, TailStrategy::RoundUp)
        .vectorize(xi)
        .vectorize(yi);
    // The arguments between the columns and the rows (a panel) inside the row tiles: one tile per innermost loop.
    std::vector<Halide::VarOrRVar> order{xi, yi, xo};
    for (int i = 1; i < rows_arg; ++i) order.emplace_back(a[i]);
    order.emplace_back(yo);
    tiles.reorder(order);
    const Var tile_loop = rows_arg > 1 ? a[rows_arg - 1] : xo;
    const std::vector<Var> s = sum.args();
    const std::vector<RVar> r = sum.rvars(0);  // (the step's values, steps)
    sum.compute_at(tiles, tile_loop).store_in(Halide::MemoryType::AMXTile).vectorize(s[0]).vectorize(s[rows_arg]);
    sum.update().reorder(r[0], s[0], s[rows_arg], r[1]).atomic().vectorize(r[0]).vectorize(s[0]).vectorize(s[rows_arg]);
    return tiles;
}

// Vectors of E per P·V register tile: pv_cols, or all of E when 0 or when they do not divide it. With
// 16 registers (AVX2) a tile of one query row by all 8 vectors of E = 64 loads 9 vectors per 8 FMAs; two
// or three rows by half of E load 6 or 7 per 8 or 12 (P read again from L1 for the other half).
int pv_columns(const Knobs& k, int e_vectors) {
    return k.pv_cols > 0 && k.pv_cols < e_vectors && e_vectors % k.pv_cols == 0 ? k.pv_cols : e_vectors;
}

// A P·V register tile is qu rows by all of E (the vectors eo), or by pv_cols of them (eu) with eg walking
// E's tiles inside the query group. Returns the tile's E loop.
Var split_value_columns(Halide::Stage update, const Var& eo, const Var& eg, const Var& eu, const Knobs& k,
                        int head_width, int lanes) {
    const int e_vectors = (head_width + lanes - 1) / lanes, columns = pv_columns(k, e_vectors);
    if (columns == e_vectors) return eo;
    update.split(eo, eg, eu, columns, TailStrategy::RoundUp);
    return eu;
}

// The P·V update's loops, innermost first: [the bf16 pair], the lanes, the tile's E vectors and rows, the
// keys, [E's tiles], then `outer`.
std::vector<Halide::VarOrRVar> value_tile_order(const RVar* pair, const Var& ei, const Var& tile_e, const Var& qu,
                                                const RVar& keys, const Var* e_tiles,
                                                std::initializer_list<Halide::VarOrRVar> outer) {
    std::vector<Halide::VarOrRVar> order;
    if (pair) order.emplace_back(*pair);
    for (const Halide::VarOrRVar& v : {Halide::VarOrRVar(ei), Halide::VarOrRVar(tile_e), Halide::VarOrRVar(qu),
                                       Halide::VarOrRVar(keys)})
        order.push_back(v);
    if (e_tiles) order.emplace_back(*e_tiles);
    order.insert(order.end(), outer);
    return order;
}

// Projections and other plain matrix products: out(o, l, b) with its reduction sum(o, l, b) over i.
// A register tile of proj_rows rows × the plan's projection_columns accumulates over all of i, then is
// stored. proj_panels = 1: one parallel task per column panel (projection_columns wide, all of i deep) and batch
// entry, its row tiles inside, so the panel (D · 64 floats, 128 KiB at D = 512) stays in L2 across the
// rows; the row tiles outermost (0) streamed all the weights (1 MiB at D = 512, beyond L2) once per
// row tile: 5–9% slower on one Zen 5 core (a JIT sweep of 128–2048 rows, D = 512).
// Returns the parallel loop's variable.
Var schedule_matrix_product(Owner out_owner, Func sum, const Tiles& tiles, const Knobs& k, bool pairs, bool amx) {
    Func out = out_owner.func;
    const int lanes = tiles.lanes;
    const std::vector<Var> a = out.args();  // (o, l, b)
    const Var o = a[0], l = a[1], b = a[2];
    Var oo("oo"), oi("oi"), lo("lo"), li("li"), t("t");
    const int cols = tiles.projection_columns;
    // On AMX tiles the output tile is whole tiles of 16 rows (amx_projection_rows), each accumulated in a tile
    // register over all of i; proj_rows sizes register tiles only.
    const int rows = amx ? amx_projection_rows : k.proj_rows;
    out.compute_root().tile(o, l, oo, lo, oi, li, cols, rows, out_owner.tail).vectorize(oi, lanes);
    const Var tile_loop = k.proj_panels ? lo : oo;
    if (k.proj_panels)
        out.reorder(oi, li, lo, oo, b).fuse(oo, b, t).parallel(t);
    else
        out.reorder(oi, li, oo, lo, b).fuse(lo, b, t).parallel(t);
    if (amx)
        amx_tile_product(sum, Halide::LoopLevel(out, tile_loop), 1);
    else
        register_tile_accumulator(sum, Halide::LoopLevel(out, tile_loop), lanes, cols, rows, pairs);
    return t;
}

// K, packed in panels of the plan's key_panel keys (lower/score.hpp). keys_per_task 0: once per
// call (compute_root, heads in parallel): a copy per query block would pack every key block once per
// query block (measured: 29% of an sdpa streaming call at L = 2048). keys_per_task 1: inside each
// attention task, the keys its query block reads (under a band, only those): where one query block
// covers Lq that is the same work, minus a fork/join of the thread pool and with the panels still in
// L1/L2 when the product reads them (sdpa L = 128: 5.6% faster on 2 threads, 1% on 1).
// In bf16 pairs (pair, kk, e/2, kt, h, b): both elements of a pair and a vector of keys per store.
void pack_keys(const CoreCommon& core, const Halide::LoopLevel& task, const Knobs& k, int lanes) {
    Func keys = core.dot.keys;
    if (core.dot.amx_tiles) {
        // (pair, kk, row): a panel row's 16 keys by both elements of their pair, one 32-bf16 store; once per call,
        // rows in parallel (the row folds the panel, head and batch entry). keys_per_task does not apply.
        const std::vector<Var> a = keys.args();
        Var ro("ro"), ri("ri");
        keys.compute_root()
            .bound(a[0], 0, 2)
            .bound(a[1], 0, amx_tile_columns)
            .bound(a[2], 0, core.dot.amx_key_rows)
            .reorder(a[0], a[1], a[2])
            .vectorize(a[0])
            .vectorize(a[1])
            .split(a[2], ro, ri, 64, TailStrategy::GuardWithIf)
            .parallel(ro);
        Func queries = core.dot.queries;
        queries.compute_at(task).vectorize(queries.args()[0], lanes, TailStrategy::RoundUp);
        return;
    }
    const std::vector<Var> a = keys.args();  // (kk, e, kt, h, b), or (pair, kk, e/2, kt, h, b)
    const bool pairs = core.dot.queries.defined();
    if (pairs) {
        keys.vectorize(a[0]).vectorize(a[1], lanes);
        Func queries = core.dot.queries;
        queries.compute_at(task).vectorize(queries.args()[0], lanes, TailStrategy::RoundUp);
    } else {
        keys.vectorize(a[0], lanes);
        if (Func queries = core.dot.converted_queries; queries.defined())
            queries.compute_at(task).vectorize(queries.args()[0], lanes, TailStrategy::RoundUp);
    }
    if (k.keys_per_task)
        keys.compute_at(task);
    else
        keys.compute_root().parallel(a[pairs ? 4 : 3]);
}

// S = scale · Q·Kᵀ inside a query tile: register tiles of key_panel keys × q_unroll queries.
// `level`: where the score tiles are made; `task`: the attention task's loop (pack_keys).
void schedule_score_product(const CoreCommon& core, const Halide::LoopLevel& level, const Halide::LoopLevel& task,
                            const Tiles& tiles, const Knobs& k) {
    const int lanes = tiles.lanes;
    if (core.dot.amx_tiles) {
        // AMX: the product in 16 × 16 tiles stored by a copy of their own (Halide stores a tile register only as
        // a plain copy). The scale is applied where the softmax reads them (a multiply per read: a pass storing the
        // scaled scores took 11 % of bf16 sdpa_causal at L = 4096); modified scores are stored, as in the register
        // tiles below.
        if (core.store_scores) {
            Func stored = core.full_block_scores.defined() ? core.full_block_scores : core.scores;
            stored.compute_at(level).vectorize(stored.args()[0], lanes, TailStrategy::RoundUp);
        }
        amx_tile_product(core.dot.sum, level, 2);  // (kk, kt, qq, qt, h, b)
        pack_keys(core, task, k, lanes);
        return;
    }
    // The tile stored from the accumulators: the scaled product, or the final scores where a modifier
    // would otherwise be evaluated at every read (CoreCommon::store_scores; the product then inlined).
    // Where predicates fill blocks, the scores before them (both passes read them; lower/streaming.hpp).
    Func stored = core.full_block_scores.defined() ? core.full_block_scores : core.scores;
    Func dot = core.store_scores ? stored : core.dot.scaled, sum = core.dot.sum;
    const std::vector<Var> d = dot.args();  // (k, q, h, b)
    Var ko("ko"), ki("ki"), qo("qo"), qi("qi");
    dot.compute_at(level)
        .tile(d[0], d[1], ko, qo, ki, qi, tiles.key_panel, k.q_unroll, TailStrategy::RoundUp)
        .vectorize(ki, lanes)
        .unroll(ki)  // the vectors of a row: with the rows unrolled too, the scaled scores are
                     // stored straight from the accumulator registers (a loop here spilled them first)
        .unroll(qi);
    // key_panels_outer: each panel of K visits every row tile of the block while it is in L1, so a task reads
    // its keys once from L2 or beyond, not once per row tile. It pays where a head's keys outgrow L2: E = 128,
    // Lk = 4096 is 2 MiB of K (sdpa one thread, Emerald Rapids: 655-747 -> 594-600 ms; E = 64, within 2-4 %).
    if (k.key_panels_outer) dot.reorder(ki, qi, qo, ko);
    register_tile_accumulator(sum, Halide::LoopLevel(dot, k.key_panels_outer ? qo : ko), lanes, tiles.key_panel,
                              k.q_unroll, core.dot.queries.defined());
    pack_keys(core, task, k, lanes);
}

// An attention core's output (e or k, q, h, b), computed at root in blocks of q_block queries (qi
// within a block), one parallel task t per (query block, head, batch), its innermost axis vectorized.
void parallel_query_blocks(Owner owner, Var qi, Var t, const Tiles& tiles) {
    Func out = owner.func;
    const int lanes = tiles.lanes;
    const std::vector<Var> a = out.args();
    Var qo("qo");
    out.compute_root()
        .split(a[1], qo, qi, tiles.query_tile, owner.tail)
        .reorder(a[0], qi, qo, a[2], a[3])
        .fuse(qo, a[2], t)
        .fuse(t, a[3], t)
        .parallel(t)
        .vectorize(a[0], lanes, owner.tail);
}

// V packed with each head contiguous, once per call, where its rows are slices of the projection's
// wider rows (heads split out of D): P·V reads a chunk of keys of one head, and at a stride of D
// floats those rows fall into a few L1 sets and evict each other (mha L = 2048: the V loads took the
// most samples of the P·V loop). Where V is an input, its rows are already dense: read in place.
// In bf16 pairs (pair, e, k/2, h, b) always (every element rounded and interleaved: once per call).
void pack_values(const CoreCommon& core, int lanes) {
    if (core.amx_weighted_sum) {
        // (pair, e, row): the two keys of a pair unrolled inside vectors of e, as below; rows in parallel.
        Func pairs = core.value_pairs;
        const std::vector<Var> a = pairs.args();
        Var ro("ro"), ri("ri");
        pairs.compute_root()
            .bound(a[0], 0, 2)
            .bound(a[2], 0, core.amx_value_rows)
            .split(a[2], ro, ri, 64, TailStrategy::GuardWithIf)
            .parallel(ro)
            .vectorize(a[1], lanes, TailStrategy::RoundUp)
            .unroll(a[0]);
        return;
    }
    if (core.value_pairs.defined()) {
        Func pairs = core.value_pairs;
        const std::vector<Var> a = pairs.args();
        Var t("t");
        // The two keys of a pair unrolled inside vectors of e: each is a dense row read (its clamp to the
        // last key scalar), and Halide interleaves the two stores into one. Vectorized over (pair, e) the
        // reads were gathers, 5 % of bf16 sdpa at L = 512.
        pairs.compute_root()
            .bound(a[0], 0, 2)
            .fuse(a[3], a[4], t)
            .parallel(t)
            .vectorize(a[1], lanes, TailStrategy::RoundUp)
            .unroll(a[0]);
        return;
    }
    if (!core.pack_values) return;
    Func values = core.values;
    const std::vector<Var> a = values.args();  // (e, k, h, b)
    Var t("t");
    values.compute_root().fuse(a[2], a[3], t).parallel(t).vectorize(a[0], lanes, TailStrategy::RoundUp);
}

// A softmax's row log-sum-exp (q, h, b) as the core's output: the same blocks and tasks as
// parallel_query_blocks, vectorized along the block's rows.
void parallel_row_blocks(Owner owner, Var t, const Tiles& tiles) {
    Func out = owner.func;
    const std::vector<Var> a = out.args();
    Var qo("qo"), qi("qi");
    out.compute_root()
        .split(a[0], qo, qi, tiles.query_tile, owner.tail)
        .reorder(qi, qo, a[1], a[2])
        .fuse(qo, a[1], t)
        .fuse(t, a[2], t)
        .parallel(t)
        .vectorize(qi, tiles.lanes, owner.tail);
}

}  // namespace attnforge::codegen::schedules
