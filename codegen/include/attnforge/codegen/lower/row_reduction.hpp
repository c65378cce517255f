// Row reductions over keys, shared by the strategies: the band restriction of a reduction to the keys a
// query tile can see, and reductions split by lanes (row max and row sum of the softmax).
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lowering.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnforge::codegen {

namespace detail {

// A Func's arguments: `first`, then `rest` (a row's indices after its key or column index).
template <class T>
std::vector<Halide::Expr> with_first(const Halide::Expr& first, const std::vector<T>& rest) {
    std::vector<Halide::Expr> args{first};
    args.insert(args.end(), rest.begin(), rest.end());
    return args;
}

// Restricts a reduction over keys to the keys a whole tile of query_tile queries can see under a band
// (causal: key < end of the block; window: key ≥ start of the block − window), with `key` rounded down
// to `granule` keys (a multiple dividing the schedule's tiles): the condition is then the same for every
// lane of a vector and every row of a register tile, and Halide turns it into loop bounds per tile
// instead of per-element tests. It only drops keys the mask removes for every query of the block.
inline void restrict_to_block_band(Halide::RDom& r, const Halide::Expr& key, const Halide::Expr& q,
                                   const KeyBand& band, int query_tile, int granule) {
    const Halide::Expr first = key / granule * granule, block = q / query_tile * query_tile;
    if (band.causal) r.where(first < block + query_tile);
    if (band.windowed()) r.where(first + (granule - 1) >= block - band.window);
}

// An associative reduction: its identity and how two partial results combine.
struct LaneReduction {
    Halide::Expr identity;
    std::function<Halide::Expr(const Halide::Expr&, const Halide::Expr&)> combine;
};

inline LaneReduction lane_max() {
    return {minus_infinity(), [](const Halide::Expr& a, const Halide::Expr& c) { return Halide::max(a, c); }};
}
inline LaneReduction lane_sum() {
    return {Halide::Expr(0.0f), [](const Halide::Expr& a, const Halide::Expr& c) { return a + c; }};
}

// The lanes' partial results lane(0) ... lane(lanes − 1) combined in one expression, a tree of pairs:
// no loop and no memory round trip (LLVM keeps the lanes in registers).
inline Halide::Expr combine_lanes(const LaneReduction& op, const std::function<Halide::Expr(int)>& lane, int lanes) {
    std::vector<Halide::Expr> level;
    for (int i = 0; i < lanes; ++i) level.push_back(lane(i));
    while (level.size() > 1) {
        std::vector<Halide::Expr> next;
        for (std::size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(op.combine(level[i], level[i + 1]));
        if (level.size() % 2) next.push_back(level.back());
        level = std::move(next);
    }
    return level.front();
}

// A reduction of each row of x(k, row...) over its Lk keys, split by lanes in the algorithm itself:
// lane u of (u, row...) reduces the keys ≡ u (mod lanes), whole vectors of keys, and the row combines
// its lanes in one expression, with no loop and no memory round trip (LLVM keeps the lanes in
// registers: a shuffle tree for sums, a chain of register max for maxima). A schedule's rfactor made
// the same vector partials but combined them in a loop over the lanes, reloading each from the stack:
// a chain of 16 dependent scalar max/add per row, twice per row, 10% of sdpa at L = 128.
// Two updates: the whole vectors inside Lk, then the last vector where Lk is not a multiple of lanes
// (an empty domain otherwise), whose keys past Lk count as the identity (score tiles are whole vectors,
// their inputs read clamped, so they exist). Testing key < Lk in every vector cost three of the loop's
// eight instructions (materialized bf16 sdpa: the row max and the row sum 4 % of the time each).
// `limit` (optional, at most Lk): only the keys below it are reduced, and only they are read, so a producer
// computed per row computes no more than those (the decode strategy's last key tile of a cache, lower/decode.hpp).
// `row_vars` are x's indices after the key (q, h, b or a streamed block's qi, qt, h, b, kb); `q` among
// them is the query index the band restriction reads: whole vectors of keys outside the query block's
// band are skipped (they are the identity; an empty band restricts nothing).
inline std::pair<Halide::Func, Halide::Func> reduce_by_lanes(const std::string& name, const LaneReduction& op,
                                                             const Halide::Func& x, const Halide::Expr& Lk,
                                                             const std::vector<Halide::Var>& row_vars,
                                                             const Halide::Var& q, const KeyBand& band,
                                                             int query_tile, int lanes,
                                                             const Halide::Expr& limit = Halide::Expr()) {
    Halide::Var u("u");
    const Halide::Expr whole = Lk / lanes, all = (Lk + lanes - 1) / lanes;
    auto at = [&](const Halide::Expr& first) { return with_first(first, row_vars); };
    std::vector<Halide::Var> lane_vars{u};
    lane_vars.insert(lane_vars.end(), row_vars.begin(), row_vars.end());
    Halide::Func per_lane(name + "_lanes"), row(name);
    per_lane(lane_vars) = op.identity;
    Halide::RDom rv(0, whole, "rv");
    restrict_to_block_band(rv, rv * lanes, q, band, query_tile, lanes);
    if (limit.defined()) rv.where(rv * lanes + lanes <= limit);
    per_lane(lane_vars) = op.combine(per_lane(lane_vars), x(at(rv * lanes + u)));
    const auto constant_lk = Halide::Internal::as_const_int(Halide::Internal::simplify(Lk % lanes));
    if (limit.defined()) {
        // The vector that holds the limit, if it falls inside one: a domain of one where it does.
        Halide::RDom rt(0, 1, "rt");
        rt.where(limit % lanes != 0);
        const Halide::Expr key = limit / lanes * lanes + u;
        per_lane(lane_vars) = op.combine(per_lane(lane_vars), Halide::select(key < limit, x(at(key)), op.identity));
    } else if (!constant_lk || *constant_lk != 0) {
        Halide::RDom rt(whole, all - whole, "rt");
        restrict_to_block_band(rt, rt * lanes, q, band, query_tile, lanes);
        const Halide::Expr key = rt * lanes + u;
        per_lane(lane_vars) = op.combine(per_lane(lane_vars), Halide::select(key < Lk, x(at(key)), op.identity));
    }
    row(row_vars) = combine_lanes(op, [&](int i) { return per_lane(at(i)); }, lanes);
    return {row, per_lane};
}

}  // namespace detail

}  // namespace attnforge::codegen
