// The decode strategy's schedule (lower/decode.hpp, lower/decode_product.hpp), stage by stage: the tasks
// and their key tiles, the score product, the tile's softmax, P·V, and the merge of the splits.
//
// One parallel task per (key split, KV head, batch entry) runs the online softmax of all the group's query
// rows over the split's key tiles; everything of a tile is computed inside the tile loop, so each tile of K
// and V is read from memory once and then from L1 by every row. The score product of one key is E/lanes
// vector FMAs (bf16: vdpbf16ps) along the row of K as stored, its lanes folded and keys_per_step keys'
// folds added as one vector. P·V is a register tile per query over its group heads. The merge of the splits
// is small: per (h, b).
#include "parts.hpp"

#include <attnforge/codegen/lower/query_digits.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace attnforge::codegen::schedules {

namespace {

// A KV head's query rows taken together inside the keys of Q·Kᵀ and in P·V, where Lq reaches it (the
// lanes-along-E product; the heads-in-lanes product takes DecodePlan::query_rows).
constexpr int rows_at_once = 4;

// The loops every stage is placed in: the state's update, whose loops are the tasks and, inside each, the
// key tiles of its split (rb).
struct DecodeLoops {
    Func state;
    Halide::LoopLevel task, tile;
};

// Half the vector registers (32 with AVX-512, 16 with AVX2): the accumulators a product's loop may hold.
int accumulators_for(int lanes) {
    return lanes >= 16 ? 16 : 8;
}

// Columns (vectors of E) of a register tile that spends `per_column` accumulators a column within `budget`: at least
// one, whole tiles of E (no column past it is ever read).
int tile_columns(int budget, int per_column, int e_vectors) {
    int columns = std::clamp(budget / per_column, 1, e_vectors);
    while (e_vectors % columns != 0) --columns;
    return columns;
}

// Whether a decode loop prefetches an input's rows in software (below, where each does): only rows read in place in
// one of `types`. Codes (uint8, int8) and fp16 are converted as they are read, which makes their loops compute-bound:
// there the prefetches cost more than they save (K and V: decode_u8 1.07x and 1.75x the time, fp16 decode_gqa 1.32x;
// V over bf16 pairs 1.25x), Zen 5.
bool prefetched(const Halide::Parameter& rows, std::initializer_list<Halide::Type> types) {
    return rows.defined() && std::find(types.begin(), types.end(), rows.type()) != types.end();
}

DecodeLoops schedule_split_tasks(DecodeCore& core, int lanes) {
    Func state = core.state;
    const std::vector<Var> s = state.args();  // (e, q, g, hk, b, s)
    Var task("task");
    state.compute_root().vectorize(s[0], lanes, TailStrategy::RoundUp);
    const RVar rb = state.rvars(0).at(0);
    // A query's group heads inside the query: their P·V is one register tile (schedule_weighted_values).
    // The tile loop is never partitioned: its where clauses leave likely() in the bounds of the stages computed per
    // tile, which Halide's partitioning took for a steady state of tiles past the valid keys, so every real tile ran
    // in the unpartitioned copy with its likely() tags dropped, and the loops inside it that read per-key scales and
    // zero points (block_weights, block_zero_sum) gathered every vector. Unpartitioned, those loops partition
    // themselves: dense loads, one clamped step at the cache's end (decode_u8 Lk = 32768, one thread, Zen 4: MHA
    // E = 64 Lq = 1 0.83x the time, GQA 32/8 E = 128 0.82x, MHA Lq = 4 0.75x; float32, bf16, fp16 caches unchanged).
    state.update()
        .reorder(s[0], s[2], s[1], rb, s[5], s[3], s[4])
        .fuse(s[5], s[3], task)
        .fuse(task, s[4], task)
        .parallel(task)
        .vectorize(s[0], lanes, TailStrategy::RoundUp)
        .never_partition(rb);
    // P·V over codes in two forms (lower/decode.hpp): each branch computes one.
    if (core.integer_values.sums.defined()) state.update().specialize(core.integer_values.condition);
    return {state, Halide::LoopLevel(state, task), Halide::LoopLevel(state, rb)};
}

// The group's heads along the lanes (lower/decode_product.hpp, heads_in_lanes_product).
void schedule_heads_in_lanes_product(DecodeCore& core, Func sum, const Var& ko, const Var& ki,
                                     const Halide::LoopLevel& tile, int lanes) {
    const int keys = core.dot.decode.keys_per_step;
    // The group's heads along the lanes (lower/decode_product.hpp): per four keys, 4 keys × 4 column accumulators
    // of group · chunk lanes, every loop unrolled; the loads walk each key's row in address order (the
    // columns innermost, then the steps, then the keys), one broadcast chunk of K per product.
    const int group = core.group, chunk = lanes / group, rows = core.dot.decode.query_rows;
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
        if (core.dot.decode.key_buffer.defined())
            sum.prefetch(core.dot.decode.key_buffer, ko, ko, steps_ahead, Halide::PrefetchBoundStrategy::NonFaulting);
        sum.bound_extent(sv[2], group).unroll(sv[2]);
    } else {
        sum.reorder(ki, sv[2], ko, sv[1]).bound_extent(sv[2], group).unroll(sv[2]);
        // One query: K's rows 16 steps ahead where K is float32, at every size as V's (schedule_weighted_values;
        // with V's: decode_gqa B = 1, Lq = 1, one thread, Zen 5: Lk = 4096 1.82 -> 1.17
        // ms, Lk = 32768 15.1 -> 10.1 ms); bf16 rows, half the bytes a step, gained nothing (0.92-1.02x).
        if (prefetched(core.dot.decode.key_buffer, {Halide::Float(32)}))
            sum.prefetch(core.dot.decode.key_buffer, ko, ko, 16, Halide::PrefetchBoundStrategy::NonFaulting);
    }
    Func per_lane = core.dot.decode.per_lane, queries = core.dot.queries;
    const std::vector<Var> a = per_lane.args();  // (x, g, c, k, q, hk, b)
    per_lane.compute_at(sum, ko).vectorize(a[0], chunk).vectorize(a[1], group).unroll(a[2]).unroll(a[3]);
    if (rows > 1) per_lane.unroll(a[4]);
    const std::vector<RVar> r = per_lane.rvars(0);  // (step) or (pair element, step)
    Halide::Stage products = per_lane.update();
    std::vector<Halide::VarOrRVar> order;
    const bool pairs = core.dot.decode.bf16_pairs;
    if (pairs) order.push_back(r[0]);
    order.insert(order.end(), {a[0], a[1], a[2]});
    // With query rows inside: per step a chunk of K for each of the four keys and a vector of Q for each row,
    // keys × rows FMAs, the steps a loop. Else each key's steps unrolled, the keys outermost.
    if (rows > 1) order.insert(order.end(), {a[3], a[4], r.back()});
    else order.insert(order.end(), {r.back(), a[3]});
    products.reorder(order);
    if (pairs) products.atomic().vectorize(r[0]);  // one vdpbf16ps
    products.vectorize(a[0], chunk).vectorize(a[1], group).unroll(a[2]).unroll(a[3]);
    products.unroll(rows > 1 ? Halide::VarOrRVar(a[4]) : Halide::VarOrRVar(r.back()));
    Func accumulated = core.dot.decode.column_sums, fold = core.dot.decode.lane_fold;
    const std::vector<Var> ca = accumulated.args();  // (x, g, k, q, hk, b)
    accumulated.compute_at(sum, ko).vectorize(ca[0], chunk).vectorize(ca[1], group).unroll(ca[2]);
    const std::vector<Var> fa = fold.args();  // (k % keys, g, k / keys, q, hk, b)
    fold.compute_at(sum, ko).vectorize(fa[0], keys).vectorize(fa[1], group);
    if (rows > 1) {
        accumulated.unroll(ca[3]);
        fold.unroll(fa[3]);
    }
    const std::vector<Var> qa = queries.args();  // ((pair,) x, g, idx, q, hk, b)
    queries.compute_at(tile);
    if (pairs) queries.vectorize(qa[0], 2).vectorize(qa[1], chunk).vectorize(qa[2], group);
    else queries.vectorize(qa[0], chunk).vectorize(qa[1], group);
}

// E along the lanes (lower/decode_product.hpp, lanes_along_e_product). Returns whether a KV head's query rows
// are taken rows_at_once at a time inside the keys (then P·V takes them so too).
bool schedule_lanes_along_e_product(DecodeCore& core, Func sum, const Var& ko, const Var& ki, int lanes) {
    const int keys = core.dot.decode.keys_per_step, accumulators = accumulators_for(lanes);
    // S for the tile: per key, per row (query, head of the group), lanes of E/lanes products.
    Func per_lane = core.dot.decode.per_lane;
    const std::vector<Var> u = per_lane.args();  // (u, k, q, h, b)
    // Four keys at a time: four independent chains of FMAs (one key's E/lanes products depend on each
    // other, 4 cycles apiece), each row of Q loaded once for the four, and their folded lanes added as one
    // vector of four keys. (A vector of 16 keys at a time, their lane sums read back at stride `lanes`,
    // measured 2x slower: gathers.)
    // The group's heads inside the four keys, where their 4·group accumulators fit in half the vector
    // registers: each K row is loaded once for the whole group, so the K stream from memory runs through
    // all of the group's products instead of one head's, the other heads re-reading the tile from L2 while
    // no memory read is in flight. Every loop over the heads unrolled (products, folds, sums), so the
    // accumulators and the folds stay in registers. With the loads in address order (below): decode_gqa
    // (group 4), Zen 4, one thread, B = 1, Lk = 32768: float32 Lq = 1 16.4 -> 11.9 ms, Lq = 4 42.6 -> 32.8 ms,
    // bf16 Lq = 1 8.6 -> 7.3 ms. (The heads inside without those unrolls: slower, the folds through the stack.)
    const bool heads_inside = core.group > 1 && keys * core.group <= accumulators;
    if (heads_inside) {
        const std::vector<Var> sv = sum.args();  // (k, q, h, b)
        sum.reorder(ki, sv[2], ko, sv[1]).bound_extent(sv[2], core.group).unroll(sv[2]);
    }
    // Likewise a KV head's query rows, four at a time, where Lq >= 4 (one head per KV head, `decode`): decode
    // B = 1, Lq = 4, H = 8, one thread, Zen 4: Lk = 32768 9.38 -> 8.12 ms, Lk = 4096 0.90 -> 0.79 ms; Lq = 1 runs
    // the loop nest above unchanged. (ShiftInwards: the last four rows of a query length that is not a
    // multiple of four overlap the ones before; sum is pure, so they are computed twice, not added twice.)
    const bool rows_inside = !heads_inside && keys * rows_at_once <= accumulators;
    if (rows_inside) {
        const std::vector<Var> sv = sum.args();  // (k, q, h, b)
        Var qo("qo"), qi("qi");
        Halide::Stage four = sum.specialize(core.rows >= 4);
        four.split(sv[1], qo, qi, rows_at_once, TailStrategy::ShiftInwards)
            .reorder(ki, qi, ko, qo)
            .unroll(qi);
        // Four rows make the loop slow enough per byte of K that the hardware prefetcher no longer streams ahead
        // of it (the loads of each row's new lines stall): the rows 16 steps (64 keys) ahead are prefetched into
        // L2, every line (codegen/prefetch_lines.hpp; NonFaulting: past the split's last key too). A run-time GQA
        // group of four, B = 1, Lq = 1, Lk = 32768, one thread, Zen 5: float32 17.3 -> 10.8 ms, bf16 5.26 -> 4.73
        // ms. Not for codes (uint8/int8: compute-bound, 1.07x slower with it).
        if (prefetched(core.dot.decode.key_buffer, {Halide::Float(32), Halide::BFloat(16)}))
            four.prefetch(core.dot.decode.key_buffer, ko, ko, 16, Halide::PrefetchBoundStrategy::NonFaulting);
    }
    per_lane.compute_at(sum, ko).vectorize(u[0], lanes).unroll(u[1]);
    // Each level of the lane tree (lower/decode_product.hpp): whole vectors, each of 2, 4, ... keys.
    const std::vector<Func>& tree = core.dot.decode.lane_tree;
    for (Func level : tree) {
        const std::vector<Var> t = level.args();  // (x, g, q, h, b)
        level.compute_at(sum, ko).vectorize(t[0], lanes).unroll(t[1]);
    }
    const std::vector<RVar> re = per_lane.rvars(0);
    Halide::Stage products = per_lane.update();
    // The loop over the four keys outermost, so that the loads walk K in address order: a key's row (E/lanes
    // vectors), then the next key's. (Column by column across the four keys, rows 4·E bytes apart, the
    // hardware prefetcher streams K worse: decode_gqa float32 Lq = 1, B = 1, Lk = 32768, one thread, Zen 4,
    // 16.5 vs 12.4 ms.)
    std::vector<Halide::VarOrRVar> order;
    const bool pairs = core.dot.decode.bf16_pairs;
    if (pairs) order.push_back(re[0]);  // over bf16 pairs (lower/decode_product.hpp): the pair's element innermost
    order.push_back(u[0]);
    // The rows taken inside the keys (per_lane's dimension: 3 the group's heads, 2 the queries), if any.
    const int inner_rows = heads_inside ? 3 : rows_inside ? 2 : -1;
    if (inner_rows >= 0) order.push_back(u[inner_rows]);
    order.push_back(re.back());
    order.push_back(u[1]);
    products.reorder(order);
    if (pairs) products.atomic().vectorize(re[0]);  // one vdpbf16ps
    if (inner_rows >= 0) {
        per_lane.unroll(u[inner_rows]);
        products.unroll(u[inner_rows]);
        for (Func level : tree) level.unroll(level.args()[inner_rows]);
    }
    products.vectorize(u[0], lanes).unroll(u[1]).unroll(re.back());
    return rows_inside;
}

// Four query rows along the lanes over codes on integer dot products (lower/decode_product.hpp,
// rows_in_lanes_integer_product): Q's digits staged once per task in the product's order; per four rows and four keys
// 3 accumulators a key (every loop unrolled: per chunk of 16 codes one broadcast for the three digits), their sums in
// float32, the four keys' x lanes folded into one vector of (key, row) scores: the sum's branch for four rows or more
// (`four`, lower/decode_product.hpp: the lanes-along-E product takes fewer).
void schedule_rows_in_lanes_integer(DecodeCore& core, const DecodeLoops& loops, Func sum, Halide::Stage four,
                                    const Var& ko, const Var& ki) {
    DecodeProduct& p = core.dot.decode;
    for (Func stage : p.query_stages) stage.compute_at(loops.task);
    const std::vector<Var> rd = p.query_digits.args();  // (t, x, jr, c, d, qo, h, b)
    p.query_digits.bound(rd[0], 0, 4).bound(rd[1], 0, 4).bound(rd[2], 0, 4);
    p.query_digits.vectorize(rd[0]).vectorize(rd[1]).vectorize(rd[2]).unroll(rd[4]);
    const std::vector<Var> sv = sum.args();  // (k, q, h, b)
    Var qo("qo"), qi("qi");
    four.split(sv[1], qo, qi, 4, TailStrategy::RoundUp).reorder(ki, qi, ko, qo).unroll(qi);
    Func lanes = p.integer_lanes;
    const std::vector<Var> a = lanes.args();  // (x, jr, d, k, qo, h, b)
    lanes.compute_at(sum, ko).vectorize(a[0]).vectorize(a[1]).unroll(a[2]).unroll(a[3]);
    const std::vector<RVar> r = lanes.rvars(0);  // (code of the lane's four, chunk of 16 codes)
    lanes.update()
        .reorder(r[0], a[0], a[1], a[2], r[1], a[3])
        .atomic()
        .vectorize(r[0])
        .vectorize(a[0])
        .vectorize(a[1])
        .unroll(a[2])
        .unroll(r[1])
        .unroll(a[3]);
    const std::vector<Var> l = p.integer_per_lane.args();  // (x, jr, k, qo, h, b)
    p.integer_per_lane.compute_at(sum, ko).vectorize(l[0]).vectorize(l[1]).unroll(l[2]);
    const std::vector<Var> f = p.lane_fold.args();  // (kk, jr, ko, qo, h, b)
    p.lane_fold.compute_at(sum, ko).vectorize(f[0]).vectorize(f[1]);
}

// Four keys along the lanes over codes on integer dot products (lower/decode_product.hpp,
// keys_in_lanes_integer_product), the sum's branch for fewer than four rows: Q's digits staged once per task in the
// product's order (16 bytes a chunk and digit, the same for the four keys); per row and four keys 3 accumulators,
// the chunks unrolled (a chunk of four K rows and three vpdpbusd), their sums in float32 and each key's four lanes
// folded, row after row.
void schedule_keys_in_lanes_integer(DecodeCore& core, const DecodeLoops& loops, Func sum, const Var& ko) {
    auto& p = core.dot.decode.keys_in_lanes;
    const std::vector<Var> rd = p.query_digits.args();  // (t, x, c, d, q, h, b)
    p.query_digits.compute_at(loops.task).bound(rd[0], 0, 4).bound(rd[1], 0, 4);
    p.query_digits.vectorize(rd[0]).vectorize(rd[1]).unroll(rd[3]);
    Func lanes = p.integer_lanes;
    const std::vector<Var> a = lanes.args();  // (x, j, d, ko, q, h, b)
    lanes.compute_at(sum, ko).bound(a[0], 0, 4).bound(a[1], 0, 4).vectorize(a[0]).vectorize(a[1]).unroll(a[2]);
    const std::vector<RVar> r = lanes.rvars(0);  // (code of the lane's four, chunk of 16 codes)
    lanes.update()
        .reorder(r[0], a[0], a[1], a[2], r[1])
        .atomic()
        .vectorize(r[0])
        .vectorize(a[0])
        .vectorize(a[1])
        .unroll(a[2])
        .unroll(r[1]);
    const std::vector<Var> l = p.per_lane.args();  // (x, j, ko, q, h, b)
    p.per_lane.compute_at(sum, ko).vectorize(l[0]).vectorize(l[1]);
    p.fold.compute_at(sum, ko).vectorize(p.fold.args()[0]);
}

// S for the tile, keys_per_step keys at a time. Returns whether query rows are taken inside the keys.
bool schedule_decode_product(DecodeCore& core, const DecodeLoops& loops, int lanes) {
    Func sum = core.dot.sum;
    Var ko("ko"), ki("ki");
    sum.compute_at(loops.tile)
        .split(sum.args().at(0), ko, ki, core.dot.decode.keys_per_step, TailStrategy::RoundUp)
        .vectorize(ki);
    if (core.dot.decode.integer_lanes.defined()) {
        schedule_rows_in_lanes_integer(core, loops, sum, sum.specialize(core.dot.decode.rows_in_lanes_condition), ko, ki);
        schedule_keys_in_lanes_integer(core, loops, sum, ko);
        return true;  // P·V takes four rows at a time where there are four
    }
    if (Func channel = core.dot.decode.channel_queries; channel.defined()) {
        // Keys with a factor per channel and block: the queries times each block's factors, once per tile (a tile
        // of 2048 keys: 16 or 17 blocks of E floats a row).
        channel.compute_at(loops.tile).vectorize(channel.args()[0], lanes);
    }
    if (!core.dot.decode.heads_in_lanes) return schedule_lanes_along_e_product(core, sum, ko, ki, lanes);
    schedule_heads_in_lanes_product(core, sum, ko, ki, loops.tile, lanes);
    return false;
}

// The tile's masked scores, max, exps and sum, each a vector of the tile's keys.
void schedule_tile_softmax(DecodeCore& core, const Halide::LoopLevel& tile, int lanes) {
    core.block_scores.compute_at(tile).vectorize(core.block_scores.args()[0], lanes, TailStrategy::RoundUp);
    reduce_row_by_lanes(core.block_max, core.block_max_lanes, tile, lanes);
    core.block_exps.compute_at(tile).vectorize(core.block_exps.args()[0], lanes, TailStrategy::RoundUp);
    reduce_row_by_lanes(core.block_sum, core.block_sum_lanes, tile, lanes);
    if (core.block_weights.defined())
        core.block_weights.compute_at(tile).vectorize(core.block_weights.args()[0], lanes, TailStrategy::RoundUp);
    if (core.block_zero_sum.defined()) reduce_row_by_lanes(core.block_zero_sum, core.block_zero_sum_lanes, tile, lanes);
    if (auto& integer = core.integer_values; integer.sums.defined()) {
        // The weights' maximum and digits, vectors of the tile's keys (the digits of a key adjacent by digit: P·V
        // broadcasts four keys' digit d as one 32-bit load).
        reduce_row_by_lanes(integer.weight_max, integer.weight_max_lanes, tile, lanes);
        const std::vector<Var> d = integer.weight_digits.args();  // (kk, d, q, g, hk, b, kb)
        integer.weight_digits.compute_at(tile).bound(d[1], 0, detail::query_digit_count)
            .reorder(d[1], d[0]).vectorize(d[0], lanes, TailStrategy::RoundUp).unroll(d[1]);
    }
}

// P·V over codes on integer dot products (lower/integer_values.hpp), the form of fewer than four rows: per row a
// register tile of columns × 3 digits int32 accumulators over the tile's keys, four keys a step, the four keys' codes
// interleaved in registers (vpermt2b from four 16-byte row loads per vector) and each digit one vpdpbusd per vector
// and four keys; their float32 value inline where the state reads it. Columns: as many as keep the accumulators
// within 24 of the 32 registers (the interleaved codes take the rest): E = 64 and 128 in one tile.
void schedule_integer_weighted_values(DecodeCore& core, const DecodeLoops& loops, int lanes) {
    Func sums = core.integer_values.sums;
    const std::vector<Var> a = sums.args();  // (e, d, q, g, hk, b, kb)
    sums.compute_at(Halide::LoopLevel(loops.state, loops.state.args()[1]))
        .bound(a[1], 0, detail::query_digit_count)
        .vectorize(a[0], lanes)
        .unroll(a[1]);
    const int e_vectors = std::max(1, core.head_width / lanes), group = std::max(1, core.group);
    constexpr int accumulator_budget = 24;
    const int columns = tile_columns(accumulator_budget, detail::query_digit_count * group, e_vectors);
    const std::vector<RVar> r = sums.rvars(0);  // (key of the lane's four, step of four keys)
    Var eo("eo"), ei("ei"), eoo("eoo"), eoi("eoi");
    sums.update()
        .split(a[0], eo, ei, lanes, TailStrategy::RoundUp)
        .split(eo, eoo, eoi, columns, TailStrategy::RoundUp)
        .reorder(r[0], ei, eoi, a[1], a[3], r[1], a[2], eoo)
        .atomic()
        .vectorize(r[0])
        .vectorize(ei)
        .unroll(eoi)
        .unroll(a[1])
        .unroll(a[3])
        .unroll(eoo);
}

void schedule_weighted_values(DecodeCore& core, const DecodeLoops& loops, bool rows_inside, int lanes) {
    if (core.integer_values.sums.defined()) schedule_integer_weighted_values(core, loops, lanes);
    const int accumulators = accumulators_for(lanes);
    // exps · V: one register tile per query, all of its group heads by `columns` vectors of E, over every
    // key of the tile; each V row (a pair of rows over bf16 pairs) is loaded once for all the heads, and the
    // memory stream of V runs through the whole loop. (Per head with V reloaded from L1 for the next head:
    // decode_gqa Lq = 4, Zen 4, 57.5 -> 45.6 ms in float32; bf16 Lq = 1 with a vdpbf16ps P·V: 10.6 -> 9.1 ms.)
    Func acc = core.integer_values.float_weighted.defined() ? core.integer_values.float_weighted : core.block_weighted;
    const std::vector<Var> w = acc.args();  // (e, q, g, hk, b, kb)
    // Where Q·Kᵀ takes four query rows at a time (rows_inside, Lq >= 4), so does P·V: a register tile of four
    // rows by E/lanes vectors, each V row loaded once for the four, computed once per tile for every row.
    // (RoundUp: up to three rows past Lq are computed from clamped queries and never read.) decode B = 1, Lq = 4,
    // H = 8, one thread, Zen 4: Lk = 32768 8.30 -> 6.03 ms float32, 5.95 -> 4.02 ms bf16; Lk = 4096 0.80 -> 0.55
    // ms; Lq = 1 and 2 unchanged within noise.
    acc.compute_at(rows_inside ? loops.tile : Halide::LoopLevel(loops.state, loops.state.args()[1])).vectorize(w[0], lanes, TailStrategy::RoundUp);
    const int e_vectors = std::max(1, core.head_width / lanes);
    const int columns = tile_columns(accumulators, std::max(1, core.group), e_vectors);
    Var eo("eo"), ei("ei"), eoo("eoo"), eoi("eoi");
    // Converted V (codes): four rows at a time keep as many columns as leave the converted vectors registers beside
    // the accumulators (rows · columns + columns of them), whole tiles of E: E = 64, 80, 96 in one tile, 128 and 256
    // in tiles of four columns on AVX-512. With E = 128 as uint8 a row's 64 columns are one cache line, so the second
    // tile reads the other line of each row: no byte of V is read twice. (Eight columns: 32 accumulators beside eight
    // converted vectors, spilled every key.)
    int row_columns = core.converted_values ? e_vectors : columns;
    if (core.converted_values)
        while (row_columns > 1 && (row_columns * (rows_at_once + 1) > 2 * accumulators || e_vectors % row_columns != 0))
            --row_columns;
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
        one_query = weighted.specialize(core.rows == 1);
        split_columns(one_query, e_vectors);
    }
    Halide::Stage four = weighted;
    if (rows_inside) {
        four = weighted.specialize(core.rows >= rows_at_once);
        split_columns(four, row_columns);
    }
    split_columns(weighted, columns);
    if (core.rounded_weights.defined())
        core.rounded_weights.compute_at(loops.tile).vectorize(core.rounded_weights.args()[0], lanes, TailStrategy::RoundUp);
    // Innermost first: (the pair's element,) the columns of a tile, the group's heads, rows inside the key loop
    // (if any), the keys, the rows outside it, the tiles of columns.
    auto order_value_loops = [&](Halide::Stage st, const std::vector<Halide::VarOrRVar>& rows_inner,
                                 const Halide::VarOrRVar& rows_outer) {
        std::vector<Halide::VarOrRVar> order;
        if (core.rounded_weights.defined()) order.push_back(acc.rvars(0).at(0));
        order.insert(order.end(), {ei, eoi, w[2]});
        order.insert(order.end(), rows_inner.begin(), rows_inner.end());
        if (core.value_span > 1) order.push_back(acc.rvars(0).at(0));  // a span's keys inside the spans
        order.push_back(acc.rvars(0).back());
        order.push_back(rows_outer);
        order.push_back(eoo);
        st.reorder(order);
        if (core.rounded_weights.defined()) st.atomic().vectorize(acc.rvars(0).at(0));
        st.vectorize(ei).unroll(eoi).unroll(w[2]).unroll(eoo);
    };
    // V's rows 64 keys ahead into L2, as K's in Q·Kᵀ, for float32 V, where four rows run inside the keys and in a
    // fixed group's one-query pass, at every cache size. Over bf16 pairs and codes 1.25x and 1.75x slower (a
    // prefetch per key for rows of 256 and 128 bytes, twice over u8's two tiles of columns).
    // Where: in the loop over a span's keys (DecodeCore::value_span), each key's row. The key loop runs over the whole
    // tile with the keys past kv_length predicated off, and Halide trims a loop to the valid keys only while its
    // body does nothing past them: a prefetch in a loop of the tile's keys kept all 2048 steps at any kv_length, one
    // in a loop over spans its 512 spans (run-time GQA 32/8, E = 128, Lk = 1: 7 µs a call with the loop trimmed,
    // 64-90 with the tile's keys, 17 with its spans); the spans have a condition of their own, which ends their loop
    // at kv_length with the prefetch inside a span.
    // When: always. Where K and V sit in the caches the prefetches take load slots (warm calls on one cache,
    // run-time GQA 32/8, E = 128, Lk = 512: 0.079 ms without, 0.115 with), but a model's K and V are cold: in
    // Llama-3-8B's decode step (torch's tensors, one thread, Zen 5) the attention kernel over a static cache of
    // 512 keys took 0.42-0.52 ms without, 0.27-0.31 with; over 2048 keys 1.38-1.55 ms without, 0.79-1.07 with.
    // A stage that does not prefetch runs the span's keys and the spans as one loop over the tile's keys, as without
    // spans: two loops there, with the spans' own bounds, took 1.18x the time of one (MHA E = 64 Lq = 1, Lk = 32768;
    // decode_gqa Lq = 2, Lk = 4096 1.32x), the one loop 1.06x the time before spans (both cells).
    auto finish_key_loops = [&](Halide::Stage st, bool prefetching) {
        if (core.value_span == 1) return;
        const RVar in_span = acc.rvars(0).at(0), spans = acc.rvars(0).back();
        if (prefetching) {  // value_span > 1 only where V is float32 read in place (lower/attention.hpp)
            constexpr int keys_ahead = 64;
            st.prefetch(core.value_buffer, in_span, in_span, keys_ahead, Halide::PrefetchBoundStrategy::NonFaulting);
        } else {
            st.fuse(in_span, spans, RVar(spans.name() + "_keys"));
        }
    };
    if (rows_inside) {
        Var qo("qo"), qi("qi");
        four.split(w[1], qo, qi, rows_at_once, TailStrategy::RoundUp);
        order_value_loops(four, {qi}, qo);
        four.unroll(qi);
        finish_key_loops(four, true);
    }
    if (single_pass_for_one_query) {
        order_value_loops(one_query, {}, w[1]);
        finish_key_loops(one_query, true);
    }
    order_value_loops(weighted, {}, w[1]);
    finish_key_loops(weighted, false);

}

void schedule_split_merge(DecodeCore& core, const Owner& owner, int lanes) {
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

void schedule_core(DecodeCore core, const Owner& owner, const Tiles& tiles, const Knobs&) {
    const DecodeLoops loops = schedule_split_tasks(core, tiles.lanes);
    const bool rows_inside = schedule_decode_product(core, loops, tiles.lanes);
    schedule_tile_softmax(core, loops.tile, tiles.lanes);
    schedule_weighted_values(core, loops, rows_inside, tiles.lanes);
    schedule_split_merge(core, owner, tiles.lanes);
}

}  // namespace attnforge::codegen::schedules
