#include <attnforge/codegen/schedules/schedule.hpp>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <variant>

namespace attnforge::codegen {

namespace {

using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

// Where a role's result is computed: see owner_of in apply_schedule.
struct Owner {
    Func func;
    TailStrategy tail;
};

// Tails: every Func scheduled here reads its inputs clamped (see lower/), so tiles are rounded up
// (TailStrategy::RoundUp): whole register tiles and vectors, no tail branches. Only the pipeline's
// output, written into the caller's buffer, guards its tails.

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
                               bool pairs = false) {
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
Var schedule_matrix_product(Owner out_owner, Func sum, const Tiles& tiles, const Knobs& k, bool pairs) {
    Func out = out_owner.func;
    const int lanes = tiles.lanes;
    const std::vector<Var> a = out.args();  // (o, l, b)
    const Var o = a[0], l = a[1], b = a[2];
    Var oo("oo"), oi("oi"), lo("lo"), li("li"), t("t");
    const int cols = tiles.projection_columns;
    out.compute_root().tile(o, l, oo, lo, oi, li, cols, k.proj_rows, out_owner.tail).vectorize(oi, lanes);
    if (k.proj_panels) {
        out.reorder(oi, li, lo, oo, b).fuse(oo, b, t).parallel(t);
        register_tile_accumulator(sum, Halide::LoopLevel(out, lo), lanes, cols, k.proj_rows, pairs);
    } else {
        out.reorder(oi, li, oo, lo, b).fuse(lo, b, t).parallel(t);
        register_tile_accumulator(sum, Halide::LoopLevel(out, oo), lanes, cols, k.proj_rows, pairs);
    }
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
    const std::vector<Var> a = keys.args();  // (kk, e, kt, h, b), or (pair, kk, e/2, kt, h, b)
    const bool pairs = core.dot.queries.defined();
    if (pairs) {
        keys.vectorize(a[0]).vectorize(a[1], lanes);
        Func queries = core.dot.queries;
        queries.compute_at(task).vectorize(queries.args()[0], lanes, TailStrategy::RoundUp);
    } else {
        keys.vectorize(a[0], lanes);
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
    // The tile stored from the accumulators: the scaled product, or the final scores where a modifier
    // would otherwise be evaluated at every read (CoreCommon::store_scores; the product then inlined).
    Func dot = core.store_scores ? core.scores : core.dot.scaled, sum = core.dot.sum;
    const std::vector<Var> d = dot.args();  // (k, q, h, b)
    Var ko("ko"), ki("ki"), qo("qo"), qi("qi");
    dot.compute_at(level)
        .tile(d[0], d[1], ko, qo, ki, qi, tiles.key_panel, k.q_unroll, TailStrategy::RoundUp)
        .vectorize(ki, lanes)
        .unroll(ki)  // the vectors of a row: with the rows unrolled too, the scaled scores are
                     // stored straight from the accumulator registers (a loop here spilled them first)
        .unroll(qi);
    register_tile_accumulator(sum, Halide::LoopLevel(dot, ko), lanes, tiles.key_panel, k.q_unroll,
                              core.dot.queries.defined());
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

void schedule_core(MaterializedCore core, Owner owner, const Tiles& tiles, const Knobs& k) {
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

void schedule_core(StreamingCore core, Owner owner, const Tiles& tiles, const Knobs& k) {
    Func out = owner.func;
    const int lanes = tiles.lanes;
    Var qi("qi"), t("t");
    parallel_query_blocks(owner, qi, t, tiles);  // matches the algorithm's query tiles exactly
    Func state = core.state;
    const std::vector<Var> s = state.args();  // (e, qi, qt, h, b)
    state.compute_at(out, t).vectorize(s[0], lanes, TailStrategy::RoundUp);
    const RVar rb = state.rvars(0).at(0);
    state.update().reorder(s[0], s[1], rb).vectorize(s[0], lanes, TailStrategy::RoundUp);

    // Everything of one key block is computed inside the block loop.
    schedule_score_product(core, Halide::LoopLevel(state, rb), Halide::LoopLevel(out, t), tiles, k);
    pack_values(core, lanes);
    reduce_row_by_lanes(core.block_max, core.block_max_lanes, Halide::LoopLevel(state, rb), lanes);
    core.block_exps.compute_at(state, rb).vectorize(core.block_exps.args()[0], lanes, TailStrategy::RoundUp);
    reduce_row_by_lanes(core.block_sum, core.block_sum_lanes, Halide::LoopLevel(state, rb), lanes);
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

// Decoding (lower/decode.hpp): one parallel task per (key split, KV head, batch entry) runs the online
// softmax of all the group's query rows over the split's key tiles; everything of a tile is computed
// inside the tile loop, so each tile of K and V is read from memory once and then from L1 by every
// row. The score product of one key is E/lanes vector FMAs (bf16: vdpbf16ps) along the row of K as
// stored, its lanes folded to four and four keys' quarters added as one vector (lower/score.hpp). P·V is a
// register tile per query over its group heads. The merge of the splits is small: per (h, b).
void schedule_core(DecodeCore core, Owner owner, const Tiles& tiles, const Knobs&) {
    const int lanes = tiles.lanes;
    Func state = core.state;
    const std::vector<Var> s = state.args();  // (e, q, g, hk, b, s)
    Var task("task");
    state.compute_root().vectorize(s[0], lanes, TailStrategy::RoundUp);
    const RVar rb = state.rvars(0).at(0);
    // A query's group heads inside the query: their P·V is one register tile (below).
    state.update()
        .reorder(s[0], s[2], s[1], rb, s[5], s[3], s[4])
        .fuse(s[5], s[3], task)
        .fuse(task, s[4], task)
        .parallel(task)
        .vectorize(s[0], lanes, TailStrategy::RoundUp);
    const Halide::LoopLevel tile(state, rb);

    // S for the tile, four keys at a time.
    constexpr int keys_at_once = 4;
    const int accumulators = lanes >= 16 ? 16 : 8;  // half the vector registers (32 with AVX-512, 16 with AVX2)
    Func sum = core.dot.sum;
    Var ko("ko"), ki("ki");
    sum.compute_at(tile).split(sum.args().at(0), ko, ki, keys_at_once, TailStrategy::RoundUp).vectorize(ki);
    bool rows_inside = false;  // a KV head's query rows four at a time (below), read by P·V too
    if (core.dot.heads_in_lanes) {
        // The group's heads along the lanes (lower/score.hpp): per four keys, 4 keys × 4 column accumulators
        // of group · chunk lanes, every loop unrolled; the loads walk each key's row in address order (the
        // columns innermost, then the steps, then the keys), one broadcast chunk of K per product.
        const int group = core.group, chunk = lanes / group, rows = core.dot.query_rows;
        const std::vector<Var> sv = sum.args();  // (k, q, h, b)
        Var qo("qo"), qi("qi");
        if (rows > 1) {
            // Query rows inside the four keys (RoundUp: rows past Lq read the last query, never consumed).
            sum.split(sv[1], qo, qi, rows, TailStrategy::RoundUp).reorder(ki, sv[2], qi, ko, qo).unroll(qi);
            // This loop walks four rows of K at once, 16 bytes at a time, and stalls on its K loads (the
            // hardware prefetcher does not stream ahead of it): the rows 16 steps (64 keys) ahead are
            // prefetched into L2, every line (codegen/prefetch_lines.hpp). NonFaulting: the last steps of a
            // split prefetch the keys after it, even past the cache (a prefetch never faults). decode_gqa B = 1,
            // Lq = 4, Lk = 32768, one thread, Zen 4, four alternated rounds, medians: one query row at a time
            // (before) 33.6 ms, four rows 29.7 ms (prefetcht1 31.3 ms; 32 steps ahead 31.3 ms); with no prefetch,
            // Halide's prefetchnta or prefetcht0 the four rows were slower than before (37-48 ms against 32-44).
            constexpr int steps_ahead = 16;
            if (core.dot.key_buffer.defined())
                sum.prefetch(core.dot.key_buffer, ko, ko, steps_ahead, Halide::PrefetchBoundStrategy::NonFaulting);
        } else {
            sum.reorder(ki, sv[2], ko, sv[1]);
        }
        sum.bound_extent(sv[2], group).unroll(sv[2]);
        Func per_lane = core.dot.per_lane, queries = core.dot.queries;
        const std::vector<Var> a = per_lane.args();  // (x, g, c, k, q, hk, b)
        per_lane.compute_at(sum, ko).vectorize(a[0], chunk).vectorize(a[1], group).unroll(a[2]).unroll(a[3]);
        if (rows > 1) per_lane.unroll(a[4]);
        const std::vector<RVar> r = per_lane.rvars(0);  // (step) or (pair element, step)
        Halide::Stage products = per_lane.update();
        std::vector<Halide::VarOrRVar> order;
        if (r.size() == 2) order.push_back(r[0]);
        order.insert(order.end(), {a[0], a[1], a[2]});
        // With query rows inside: per step a chunk of K for each of the four keys and a vector of Q for each row,
        // keys × rows FMAs, the steps a loop. Else each key's steps unrolled, the keys outermost.
        if (rows > 1) order.insert(order.end(), {a[3], a[4], r.back()});
        else order.insert(order.end(), {r.back(), a[3]});
        products.reorder(order);
        if (r.size() == 2) products.atomic().vectorize(r[0]);  // one vdpbf16ps
        products.vectorize(a[0], chunk).vectorize(a[1], group).unroll(a[2]).unroll(a[3]);
        products.unroll(rows > 1 ? Halide::VarOrRVar(a[4]) : Halide::VarOrRVar(r.back()));
        Func accumulated = core.dot.column_sums, fold = core.dot.lane_fold;
        const std::vector<Var> ca = accumulated.args();  // (x, g, k, q, hk, b)
        accumulated.compute_at(sum, ko).vectorize(ca[0], chunk).vectorize(ca[1], group).unroll(ca[2]);
        const std::vector<Var> fa = fold.args();  // (k % 4, g, k / 4, q, hk, b)
        fold.compute_at(sum, ko).vectorize(fa[0], keys_at_once).vectorize(fa[1], group);
        if (rows > 1) {
            accumulated.unroll(ca[3]);
            fold.unroll(fa[3]);
        }
        const std::vector<Var> qa = queries.args();  // ((pair,) x, g, idx, q, hk, b)
        queries.compute_at(tile);
        if (r.size() == 2) queries.vectorize(qa[0], 2).vectorize(qa[1], chunk).vectorize(qa[2], group);
        else queries.vectorize(qa[0], chunk).vectorize(qa[1], group);
    } else {
        // S for the tile: per key, per row (query, head of the group), lanes of E/lanes products.
        Func per_lane = core.dot.per_lane;
        const std::vector<Var> u = per_lane.args();  // (u, k, q, h, b)
        // Four keys at a time: four independent chains of FMAs (one key's E/lanes products depend on each
        // other, 4 cycles apiece), each row of Q loaded once for the four, and their folded lanes added as one
        // vector of four keys. (A vector of 16 keys at a time, their lane sums read back at stride `lanes`,
        // measured 2x slower: gathers.)
        Func fold = core.dot.lane_fold;
        // The group's heads inside the four keys, where their 4·group accumulators fit in half the vector
        // registers: each K row is loaded once for the whole group, so the K stream from memory runs through
        // all of the group's products instead of one head's, the other heads re-reading the tile from L2 while
        // no memory read is in flight. Every loop over the heads unrolled (products, folds, sums), so the
        // accumulators and the folds stay in registers. With the loads in address order (below): decode_gqa
        // (group 4), Zen 4, one thread, B = 1, Lk = 32768: float32 Lq = 1 16.4 -> 11.9 ms, Lq = 4 42.6 -> 32.8 ms,
        // bf16 Lq = 1 8.6 -> 7.3 ms. (The heads inside without those unrolls: slower, the folds through the stack.)
        const bool heads_inside = core.group > 1 && keys_at_once * core.group <= accumulators;
        if (heads_inside) {
            const std::vector<Var> sv = sum.args();  // (k, q, h, b)
            sum.reorder(ki, sv[2], ko, sv[1]).bound_extent(sv[2], core.group).unroll(sv[2]);
        }
        // Likewise a KV head's query rows, four at a time, where Lq >= 4 (one head per KV head, `decode`): decode
        // B = 1, Lq = 4, H = 8, one thread, Zen 4: Lk = 32768 9.38 -> 8.12 ms, Lk = 4096 0.90 -> 0.79 ms; Lq = 1 runs
        // the loop nest above unchanged. (ShiftInwards: the last four rows of a query length that is not a
        // multiple of four overlap the ones before; sum is pure, so they are computed twice, not added twice.)
        rows_inside = !heads_inside && keys_at_once * 4 <= accumulators;
        if (rows_inside) {
            const std::vector<Var> sv = sum.args();  // (k, q, h, b)
            Var qo("qo"), qi("qi");
            sum.specialize(core.score_extents[1] >= 4)
                .split(sv[1], qo, qi, 4, TailStrategy::ShiftInwards)
                .reorder(ki, qi, ko, qo)
                .unroll(qi);
        }
        per_lane.compute_at(sum, ko).vectorize(u[0], lanes).unroll(u[1]);
        fold.compute_at(sum, ko).vectorize(fold.args()[0], 4).unroll(fold.args()[1]);
        const std::vector<RVar> re = per_lane.rvars(0);
        Halide::Stage products = per_lane.update();
        // The loop over the four keys outermost, so that the loads walk K in address order: a key's row (E/lanes
        // vectors), then the next key's. (Column by column across the four keys, rows 4·E bytes apart, the
        // hardware prefetcher streams K worse: decode_gqa float32 Lq = 1, B = 1, Lk = 32768, one thread, Zen 4,
        // 16.5 vs 12.4 ms.)
        std::vector<Halide::VarOrRVar> order;
        if (re.size() == 2) order.push_back(re[0]);  // over bf16 pairs (lower/score.hpp): the pair's element innermost
        order.push_back(u[0]);
        // The rows taken inside the keys (per_lane's dimension: 3 the group's heads, 2 the queries), if any.
        const int inner_rows = heads_inside ? 3 : rows_inside ? 2 : -1;
        if (inner_rows >= 0) order.push_back(u[inner_rows]);
        order.push_back(re.back());
        order.push_back(u[1]);
        products.reorder(order);
        if (re.size() == 2) products.atomic().vectorize(re[0]);  // one vdpbf16ps
        if (inner_rows >= 0) {
            per_lane.unroll(u[inner_rows]);
            products.unroll(u[inner_rows]);
            fold.unroll(fold.args()[inner_rows]);
        }
        products.vectorize(u[0], lanes).unroll(u[1]).unroll(re.back());
    }
    core.block_scores.compute_at(tile).vectorize(core.block_scores.args()[0], lanes, TailStrategy::RoundUp);
    reduce_row_by_lanes(core.block_max, core.block_max_lanes, tile, lanes);
    core.block_exps.compute_at(tile).vectorize(core.block_exps.args()[0], lanes, TailStrategy::RoundUp);
    reduce_row_by_lanes(core.block_sum, core.block_sum_lanes, tile, lanes);
    // exps · V: one register tile per query, all of its group heads by `columns` vectors of E, over every
    // key of the tile; each V row (a pair of rows over bf16 pairs) is loaded once for all the heads, and the
    // memory stream of V runs through the whole loop. (Per head with V reloaded from L1 for the next head:
    // decode_gqa Lq = 4, Zen 4, 57.5 -> 45.6 ms in float32; bf16 Lq = 1 with a vdpbf16ps P·V: 10.6 -> 9.1 ms.)
    Func acc = core.block_weighted;
    const std::vector<Var> w = acc.args();  // (e, q, g, hk, b, kb)
    // Where Q·Kᵀ takes four query rows at a time (rows_inside, Lq >= 4), so does P·V: a register tile of four
    // rows by E/lanes vectors, each V row loaded once for the four, computed once per tile for every row.
    // (RoundUp: up to three rows past Lq are computed from clamped queries and never read.) decode B = 1, Lq = 4,
    // H = 8, one thread, Zen 4: Lk = 32768 8.30 -> 6.03 ms float32, 5.95 -> 4.02 ms bf16; Lk = 4096 0.80 -> 0.55
    // ms; Lq = 1 and 2 unchanged within noise.
    acc.compute_at(rows_inside ? tile : Halide::LoopLevel(state, s[1])).vectorize(w[0], lanes, TailStrategy::RoundUp);
    const int e_vectors = std::max(1, core.head_width / lanes);
    int columns = std::clamp(accumulators / std::max(1, core.group), 1, e_vectors);
    while (e_vectors % columns != 0) --columns;  // whole tiles of E: no column past it is ever read
    Var eo("eo"), ei("ei"), eoo("eoo"), eoi("eoi");
    Halide::Stage weighted = acc.update();
    auto split_columns = [&](Halide::Stage st, int tile_columns) {
        st.split(w[0], eo, ei, lanes, TailStrategy::RoundUp).split(eo, eoo, eoi, tile_columns, TailStrategy::RoundUp);
    };
    // One query (Lq = 1): all of E in one register tile wherever the group's accumulators fit the vector registers
    // at all (decode_gqa on AVX-512: 4 heads × 8 vectors, all 32), though the operands then spill a few of them
    // (LLVM: ~10 spills and reloads a key, and register moves). With two tiles of columns the second re-reads the
    // tile's V from L2 with no memory read in flight; in one pass the V stream runs through all of the P·V.
    // decode_gqa B = 1, Lq = 1, Lk = 32768, one thread, Zen 4: float32 11.8 -> 10.4 ms, bf16 7.0 -> 5.9 ms. Where
    // a query's P·V re-reads V from L1/L2 anyway (Lq >= 2) the spills cost more than they save (float32 Lq = 2
    // 18.2 -> 18.6 ms, Lq = 4 32 -> 36-44 ms), so other query lengths keep the tiles that fit.
    const int vector_registers = 2 * accumulators;
    const bool single_pass_for_one_query =
        columns < e_vectors && std::max(1, core.group) * e_vectors <= vector_registers;
    Halide::Stage one_query = weighted;
    if (single_pass_for_one_query) {
        one_query = weighted.specialize(core.score_extents[1] == 1);
        split_columns(one_query, e_vectors);
    }
    split_columns(weighted, columns);
    if (core.rounded_weights.defined())
        core.rounded_weights.compute_at(tile).vectorize(core.rounded_weights.args()[0], lanes, TailStrategy::RoundUp);
    // Innermost first: (the pair's element,) the columns of a tile, the group's heads, rows inside the key loop
    // (if any), the keys, the rows outside it, the tiles of columns.
    auto order_value_loops = [&](Halide::Stage st, const std::vector<Halide::VarOrRVar>& rows_inner,
                                 const Halide::VarOrRVar& rows_outer) {
        std::vector<Halide::VarOrRVar> order;
        if (core.rounded_weights.defined()) order.push_back(acc.rvars(0).at(0));
        order.insert(order.end(), {ei, eoi, w[2]});
        order.insert(order.end(), rows_inner.begin(), rows_inner.end());
        order.push_back(acc.rvars(0).back());
        order.push_back(rows_outer);
        order.push_back(eoo);
        st.reorder(order);
        if (core.rounded_weights.defined()) st.atomic().vectorize(acc.rvars(0).at(0));
        st.vectorize(ei).unroll(eoi).unroll(w[2]).unroll(eoo);
    };
    if (rows_inside) {
        Var qo("qo"), qi("qi");
        Halide::Stage four = weighted.specialize(core.score_extents[1] >= 4);
        four.split(w[1], qo, qi, 4, TailStrategy::RoundUp);
        order_value_loops(four, {qi}, qo);
        four.unroll(qi);
    }
    if (single_pass_for_one_query) order_value_loops(one_query, {}, w[1]);
    order_value_loops(weighted, {}, w[1]);

    // The merge: per (h, b) of the output, the splits' maxima, then their sums.
    Func out = owner.func;
    const std::vector<Var> o = out.args();  // (e, q, h, b)
    Var hb("hb");
    out.compute_root().fuse(o[2], o[3], hb).parallel(hb).vectorize(o[0], lanes, owner.tail);
    core.split_max.compute_at(out, hb);
    core.merged.compute_at(out, hb).vectorize(core.merged.args()[0], lanes, TailStrategy::RoundUp);
    core.merged.update().vectorize(core.merged.args()[0], lanes, TailStrategy::RoundUp);
}

}  // namespace

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
        const Var parallel_loop = schedule_matrix_product(owner, p.sum, tiles, knobs, p.bf16_pairs);
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
    }
    for (Func f : roles.tables) f.compute_root().parallel(f.args().back());
    // The bf16 copies of projections over pairs, once per call: rows (i, l, b), weights (pair, o, i/2).
    for (Func f : roles.bf16_rows)
        f.compute_root().parallel(f.args()[2]).vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf);
    for (Func f : roles.bf16_weight_pairs) {
        const std::vector<Var> a = f.args();
        f.compute_root().parallel(a[2]).vectorize(a[0]).vectorize(a[1], lanes, TailStrategy::RoundUp);
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
