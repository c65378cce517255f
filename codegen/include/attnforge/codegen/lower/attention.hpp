// score, softmax and weighted_sum. weighted_sum(softmax(S), V) is lowered as (Σ_k exp(S - m) · V) / z,
// the same value as P · V with P = exp(S - m) / z, so that no normalized P is ever materialized and a
// strategy can stream over keys. Fully masked rows (m = -inf, z = 0) give zero rows, never NaN; a
// NaN that reaches a row (z = NaN) stays NaN, never a silent zero row (README, "Bad input").
#pragma once

#include <attnforge/codegen/lower.hpp>
#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/masks.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace attnforge::codegen {

namespace detail {

// The band of keys a chain of masks leaves to each query, known at generation time.
struct KeyBand {
    bool causal = false;  // keys <= q
    int window = -1;      // keys >= q - window (with causal)
};

template <class S>
constexpr KeyBand key_band(const S&) { return {}; }

// Only masks lie between a softmax and its score product: masking commutes with a positive factor
// (−∞ stays −∞), so the product itself may scale by log2(e) (lower/softmax_exp.hpp). Modifiers read
// the score in natural units; above them the factor is a multiply of its own.
template <class S>
constexpr bool masks_over_score = false;
template <class Q, class K>
constexpr bool masks_over_score<dsl::score_node<Q, K>> = true;
template <class S, class Spec>
constexpr bool masks_over_score<dsl::mask_node<S, Spec>> = masks_over_score<S>;
template <class S, class Spec>
constexpr KeyBand key_band(const dsl::mask_node<S, Spec>& n) {
    KeyBand band = key_band(n.scores);
    if constexpr (std::is_same_v<Spec, dsl::causal_mask>) {
        band.causal = true;
    } else if constexpr (requires { n.spec.window; }) {
        band.causal = true;
        band.window = band.window < 0 ? n.spec.window : std::min(band.window, n.spec.window);
    }
    return band;
}
template <class S, class E>
constexpr KeyBand key_band(const dsl::modify_node<S, E>& n) { return key_band(n.scores); }

// Restricts a reduction over keys to the keys a whole block of q_block queries can see under a band
// (causal: key < end of the block; window: key ≥ start of the block − window), with `key` rounded down
// to `granule` keys (a multiple dividing the schedule's tiles): the condition is then the same for every
// lane of a vector and every row of a register tile, and Halide turns it into loop bounds per tile
// instead of per-element tests. It only drops keys the mask removes for every query of the block.
inline void restrict_to_block_band(Halide::RDom& r, const Halide::Expr& key, const Halide::Expr& q,
                                   const LoweringContext::Band& band, int q_block, int granule) {
    const Halide::Expr first = key / granule * granule, block = q / q_block * q_block;
    if (band.causal) r.where(first < block + q_block);
    if (band.window >= 0) r.where(first + (granule - 1) >= block - band.window);
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

// A reduction of each row of x(k, row...) over its Lk keys, split by lanes in the algorithm itself:
// lane u of (u, row...) reduces the keys ≡ u (mod lanes), whole vectors of keys (those past Lk count
// as the identity: score tiles are whole vectors, their inputs read clamped, so they exist), and the
// row combines its lanes in one expression, with no loop and no memory round trip (LLVM keeps the
// lanes in registers: a shuffle tree for sums, a chain of register max for maxima). A schedule's
// rfactor made the same vector partials but combined them in a loop over the lanes, reloading each
// from the stack: a chain of 16 dependent scalar max/add per row, twice per row, 10% of sdpa at
// L = 128. `row_vars` are x's indices after the key (q, h, b or a streamed block's qi, qt, h, b, kb);
// `q` among them is the query index the band restriction reads: whole vectors of keys outside the query
// block's band are skipped (they are the identity; an empty band restricts nothing).
inline std::pair<Halide::Func, Halide::Func> reduce_by_lanes(const std::string& name, const LaneReduction& op, const Halide::Func& x,
                                                             const Halide::Expr& Lk, const std::vector<Halide::Var>& row_vars,
                                                             const Halide::Var& q, const LoweringContext::Band& band, int q_block,
                                                             int lanes) {
    Halide::Var u("u");
    Halide::RDom rv(0, (Lk + lanes - 1) / lanes, "rv");
    restrict_to_block_band(rv, rv * lanes, q, band, q_block, lanes);
    const Halide::Expr key = rv * lanes + u;
    auto at = [&](Halide::Expr first) {
        std::vector<Halide::Expr> args{std::move(first)};
        args.insert(args.end(), row_vars.begin(), row_vars.end());
        return args;
    };
    std::vector<Halide::Var> lane_vars{u};
    lane_vars.insert(lane_vars.end(), row_vars.begin(), row_vars.end());
    Halide::Func per_lane(name + "_lanes"), row(name);
    per_lane(lane_vars) = op.identity;
    per_lane(lane_vars) = op.combine(per_lane(lane_vars), Halide::select(key < Lk, x(at(key)), op.identity));
    std::vector<Halide::Expr> level;
    for (int i = 0; i < lanes; ++i) level.push_back(per_lane(at(i)));
    while (level.size() > 1) {
        std::vector<Halide::Expr> next;
        for (std::size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(op.combine(level[i], level[i + 1]));
        if (level.size() % 2) next.push_back(level.back());
        level = std::move(next);
    }
    row(row_vars) = level.front();
    return {row, per_lane};
}

// V's column e, clamped where the head width is not a whole number of vectors (64 lanes at most), so
// that schedules may round vector tiles up.
inline Halide::Expr value_column(const Halide::Var& e, int head_width) {
    return head_width % 64 == 0 ? Halide::Expr(e) : Halide::clamp(e, 0, head_width - 1);
}

// The pre-pass of block_mask kernels: for each query tile qt (q_block queries) the first and the last
// key block (k_block keys) holding a pair that every run-time mask keeps, ranges(i, qt, h, b) with
// i = 0 first, 1 last (first > last: none, the tile's rows are all masked); h is 0 when no mask reads
// it. Reduced in three steps: over each block's keys per query (vectorized along queries), over the
// tile's queries, then over the blocks.
inline LiveKeyBlocks live_key_blocks(const AttentionCore& core, const Knobs& knobs) {
    using Halide::Expr;
    const int Kb = knobs.k_block, Qb = knobs.q_block;
    const Expr Lk = core.score_extents[0], Lq = core.score_extents[1];
    Halide::Var q("q"), kb("kb"), qt("qt"), h("h"), b("b"), i("i");
    LiveKeyBlocks live{Halide::Func("live_rows"), Halide::Func("live_blocks"), Halide::Func("block_ranges")};
    Halide::RDom rk(0, Kb, "rk");
    const Expr key = kb * Kb + rk;
    Expr kept = key < Lk && q < Lq;
    for (const Halide::Func& keep : core.keeps) kept = kept && keep(key, q, h, b);
    live.rows(q, kb, h, b) = Halide::cast<uint8_t>(0);
    live.rows(q, kb, h, b) = Halide::max(live.rows(q, kb, h, b), Halide::cast<uint8_t>(kept));
    Halide::RDom rq(0, Qb, "rq");
    live.blocks(kb, qt, h, b) = Halide::cast<uint8_t>(0);
    live.blocks(kb, qt, h, b) = Halide::max(live.blocks(kb, qt, h, b), live.rows(qt * Qb + rq, kb, h, b));
    const Expr count = (Lk + Kb - 1) / Kb;
    Halide::RDom rb(0, count, "rb");
    const Expr is_live = live.blocks(rb, qt, h, b) != 0;
    live.ranges(i, qt, h, b) = Halide::select(i == 0, count, -1);
    live.ranges(i, qt, h, b) = Halide::select(i == 0, Halide::min(live.ranges(i, qt, h, b), Halide::select(is_live, rb, count)),
                                              Halide::max(live.ranges(i, qt, h, b), Halide::select(is_live, rb, -1)));
    return live;
}

// Online softmax over key blocks (the streaming strategy). Each block is normalized by its own max,
// then merged into the running state: m' = max(m, m_b), l' = l·e^(m-m') + l_b·e^(m_b-m'),
// acc' = acc·e^(m-m') + acc_b·e^(m_b-m'); the output is acc / l (0 when l = 0: every key masked).
// Queries are tiled in the algorithm itself (q = qt·q_block + qi), so that the key blocks a tile
// needs under a causal or sliding-window mask are a range of the block loop that Halide bounds
// exactly: blocks wholly outside the band are never visited.
inline Halide::Func streamed_weighted_sum(AttentionCore& core, const Lowered& v, int group, LoweringContext& ctx,
                                          const std::string& name) {
    using Halide::Expr;
    const int Kb = ctx.knobs.k_block, Qb = ctx.knobs.q_block;
    const Expr Lk = core.score_extents[0];
    Halide::Var kk("kk"), qi("qi"), qt("qt"), h("h"), b("b"), e("e"), kb("kb"), q("q");
    const Expr key = kb * Kb + kk, query = qt * Qb + qi;
    const Expr inf = minus_infinity();
    Halide::Func block_scores(name + "_block_scores");
    // Scores past Lk (the last block's tail) are masked out here; the score product and the mask inputs
    // read clamped, so the indices need no clamping (which would turn vector loads into gathers).
    block_scores(kk, qi, qt, h, b, kb) = ieee(Halide::select(key < Lk, core.scores(key, query, h, b), inf));

    const std::vector<Halide::Var> block_row{qi, qt, h, b, kb};
    std::tie(core.block_max, core.block_max_lanes) =
        detail::reduce_by_lanes(name + "_block_max", detail::lane_max(), block_scores, Kb, block_row, qi, {}, Qb, ctx.lanes);
    const Expr block_max = core.block_max(qi, qt, h, b, kb);
    core.block_exps = Halide::Func(name + "_block_exps");
    core.block_exps(kk, qi, qt, h, b, kb) =
        softmax_exp2(block_scores(kk, qi, qt, h, b, kb) - ieee(Halide::select(block_max == inf, 0.0f, block_max)));
    std::tie(core.block_sum, core.block_sum_lanes) =
        detail::reduce_by_lanes(name + "_block_sum", detail::lane_sum(), core.block_exps, Kb, block_row, qi, {}, Qb, ctx.lanes);
    Halide::RDom rk(0, Kb, "rk");
    core.block_weighted = Halide::Func(name + "_block_weighted");
    core.block_weighted(e, qi, qt, h, b, kb) = 0.0f;
    core.block_weighted(e, qi, qt, h, b, kb) +=
        core.block_exps(rk, qi, qt, h, b, kb) * core.values(e, Halide::min(kb * Kb + rk, Lk - 1), h / group, b);

    // The merge over blocks, restricted to the blocks the tile's key band reaches, and to the range of
    // live blocks the pre-pass found (block_mask).
    Halide::RDom rb(0, (Lk + Kb - 1) / Kb, "rb");
    if (core.causal_like) rb.where(rb * Kb <= qt * Qb + (Qb - 1));
    if (core.key_begin_offset.defined()) rb.where(rb * Kb + (Kb - 1) >= qt * Qb + core.key_begin_offset);
    if (ctx.block_ranges && !core.keeps.empty()) {
        const Expr hh = core.keeps_use_heads ? Expr(h) : Expr(0);
        rb.where(rb >= ctx.block_ranges(0, qt, hh, b));
        rb.where(rb <= ctx.block_ranges(1, qt, hh, b));
    }
    core.state = Halide::Func(name + "_state");
    core.state(e, qi, qt, h, b) = Halide::Tuple(inf, 0.0f, 0.0f);
    const Expr m_old = core.state(e, qi, qt, h, b)[0];
    const Expr m_block = core.block_max(qi, qt, h, b, rb);
    const Expr m_new = Halide::max(m_old, m_block);
    // One exp for both factors: the larger max gets factor 1, the other e^(smaller − larger) (0 when
    // the smaller is −∞: an empty state or a wholly masked block). Both −∞: nothing yet, both 0.
    const Expr smaller = Halide::min(m_old, m_block);
    const Expr f = ieee(Halide::select(m_new == inf, 0.0f, softmax_exp2(smaller - m_new)));
    const Expr keep_old = ieee(Halide::select(m_old == m_new && m_new != inf, 1.0f, f));
    const Expr take_block = ieee(Halide::select(m_old == m_new, f, 1.0f));
    core.state(e, qi, qt, h, b) = Halide::Tuple(
        m_new, core.state(e, qi, qt, h, b)[1] * keep_old + core.block_sum(qi, qt, h, b, rb) * take_block,
        core.state(e, qi, qt, h, b)[2] * keep_old + core.block_weighted(e, qi, qt, h, b, rb) * take_block);

    Halide::Func out(name);
    const Expr l = core.state(e, q % Qb, q / Qb, h, b)[1];
    out(e, q, h, b) = ieee(Halide::select(l == 0.0f, 0.0f, core.state(e, q % Qb, q / Qb, h, b)[2] / l));
    core.streamed = true;
    return out;
}

}  // namespace detail

template <class Q, class K>
Lowered Lower::impl(const dsl::score_node<Q, K>& n, LoweringContext& ctx) {
    // Q and K are lowered as they would be anywhere else (the band and the base belong to this product
    // only), so that a sub-graph they share with V (a LayerNorm) stays one Func.
    const LoweringContext::Band band = std::exchange(ctx.band, {});
    const bool base2 = std::exchange(ctx.scores_in_base2, false);
    const Lowered q = node(n.q, ctx), k = node(n.k, ctx);
    ctx.band = band;
    ctx.scores_in_base2 = base2;
    constexpr int Hq = Q::kind::heads, Hkv = K::kind::heads;
    constexpr int group = Hq == dsl::runtime_heads ? 1 : Hq / Hkv;
    const std::string name = ctx.name("score");
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    Halide::RDom e(0, Q::kind::head_width, "e");
    const int P = ctx.knobs.k_unroll * ctx.lanes;  // keys per score tile and per packed K panel
    // Under a causal or sliding-window band (materialized): key panels (the score tile's width) outside
    // the band of the query block are never multiplied; their sums stay 0 and the mask makes them −∞.
    detail::restrict_to_block_band(e, kv, qi, ctx.band, ctx.knobs.q_block, P);
    Halide::Func sum(name + "_sum"), f(name);
    sum(kv, qi, h, b) = 0.0f;
    // Reads clamped as in linear, so that score tiles may be rounded up. K is read through a Func of
    // its own, packed in panels of P keys: keys(kk, e, kt) = K(kt·P + kk, e), the P keys of a panel
    // contiguous for each e. A score register tile (P keys wide) then reads one contiguous panel with
    // whole vector loads: no gathers, and no 4 KiB-strided rows that would thrash the L1 sets (K stored
    // transposed whole, rows Lk apart, measured 25% slower at Lk = 2048). The clamp is here, once per
    // packed element, not at the product's load where Halide cannot always prove it away.
    Halide::Var kk("kk"), ke("e"), kt("kt");
    Halide::Func keys(name + "_keys");
    keys(kk, ke, kt, h, b) = k.func(ke, Halide::clamp(kt * P + kk, 0, k.extents[1] - 1), h, b);
    sum(kv, qi, h, b) += q.func(e, Halide::clamp(qi, 0, q.extents[1] - 1), h, b) * keys(kv % P, e, kv / P, h / group, b);
    f(kv, qi, h, b) = sum(kv, qi, h, b) * static_cast<float>(n.effective_scale() * (base2 ? log2_e : 1.0));
    ctx.roles.score_products.push_back({f, sum, keys});
    // extents: (Lk, Lq, Hq, B)
    return {f, {k.extents[1], q.extents[1], q.extents[2], q.extents[3]}};
}

template <class S, dsl::fixed_string Label>
AttentionCore Lower::softmax_core(const dsl::softmax_node<S, Label>& n, LoweringContext& ctx, bool band_only) {
    if (ctx.knobs.strategy == Strategy::materialized) {
        const auto key_band = detail::key_band(n.scores);
        ctx.band = {key_band.causal, key_band.window};
    }
    constexpr bool folded = detail::masks_over_score<S>;
    ctx.scores_in_base2 = folded;
    const Lowered s = node(n.scores, ctx);
    ctx.scores_in_base2 = false;
    const LoweringContext::Band block_band = ctx.band;
    ctx.band = {};
    AttentionCore core;
    core.keeps = std::exchange(ctx.pending_keeps, {});
    core.keeps_use_heads = std::exchange(ctx.pending_keeps_use_heads, false);
    const std::string name = ctx.name("softmax");
    Halide::Var k("k"), q("q"), h("h"), b("b");
    // Scores in base 2 (lower/softmax_exp.hpp): the product already carries log2(e), or one multiply
    // here (inlined into whoever reads the scores).
    if (folded) {
        core.scores = s.func;
    } else {
        core.scores = Halide::Func(name + "_base2_scores");
        core.scores(k, q, h, b) = s.func(k, q, h, b) * static_cast<float>(log2_e);
    }
    core.score_extents = s.extents;
    // The chain of masks and modifiers above holds exactly one score node, the last one lowered.
    core.dot = ctx.roles.score_products.back();
    core.exps = Halide::Func(name + "_exps");
    std::tie(core.row_max, core.row_max_lanes) =
        detail::reduce_by_lanes(name + "_row_max", detail::lane_max(), core.scores, s.extents[0], {q, h, b}, q, block_band, ctx.knobs.q_block, ctx.lanes);
    // A fully masked row has max -inf: shift by 0 instead, so that every exp(-inf) is exactly 0
    // (softmax_exp2(-inf) is 0; Halide's fast_exp is not used because fast_exp(-inf) is NaN).
    const Halide::Expr shift = ieee(Halide::select(core.row_max(q, h, b) == minus_infinity(), 0.0f, core.row_max(q, h, b)));
    if (block_band.causal) {
        // Exps only inside the block's band (whole vectors). Outside: 0 (what the mask gives) where the
        // probabilities are the result; nothing where only the band is read (no pass over the rest).
        core.exps(k, q, h, b) = band_only ? Halide::undef<float>() : Halide::Expr(0.0f);
        Halide::RDom re(0, s.extents[0], "re");
        detail::restrict_to_block_band(re, re, q, block_band, ctx.knobs.q_block, ctx.lanes);
        core.exps(re, q, h, b) = softmax_exp2(core.scores(re, q, h, b) - shift);
        core.banded_exps = true;
    } else {
        core.exps(k, q, h, b) = softmax_exp2(core.scores(k, q, h, b) - shift);
    }
    std::tie(core.row_sum, core.row_sum_lanes) =
        detail::reduce_by_lanes(name + "_row_sum", detail::lane_sum(), core.exps, s.extents[0], {q, h, b}, q, block_band, ctx.knobs.q_block, ctx.lanes);
    const auto band = detail::key_band(n.scores);
    core.causal_like = band.causal;
    if (band.window >= 0) core.key_begin_offset = Halide::Expr(-band.window);
    return core;
}

template <class S, dsl::fixed_string Label>
Lowered Lower::impl(const dsl::softmax_node<S, Label>& n, LoweringContext& ctx) {
    AttentionCore core = softmax_core(n, ctx, false);
    Halide::Var k("k"), q("q"), h("h"), b("b");
    core.probabilities = Halide::Func(ctx.name("probabilities"));
    core.probabilities(k, q, h, b) =
        ieee(Halide::select(core.row_sum(q, h, b) == 0.0f, 0.0f, core.exps(k, q, h, b) / core.row_sum(q, h, b)));
    core.output = core.probabilities;
    ctx.roles.cores.push_back(core);
    return {core.probabilities, core.score_extents};
}

template <class P, class V>
Lowered Lower::impl(const dsl::weighted_sum_node<P, V>& n, LoweringContext& ctx) {
    const Lowered v = node(n.v, ctx);
    constexpr int Hq = P::kind::heads, Hkv = V::kind::heads;
    constexpr int group = Hq == dsl::runtime_heads ? 1 : Hq / Hkv;
    const std::string name = ctx.name("weighted_sum");
    Halide::Var e("e"), q("q"), h("h"), b("b");
    Halide::Func acc(name + "_sum"), out(name);
    std::vector<Halide::Expr> p_extents;  // (Lk, Lq, H, B)
    if constexpr (requires { n.probabilities.scores; }) {  // P is a softmax: normalize after the sum
        AttentionCore core = softmax_core(n.probabilities, ctx, true);
        p_extents = core.score_extents;
        core.head_width = V::kind::head_width;
        core.values = Halide::Func(name + "_values");
        core.values(e, q, h, b) = v.func(detail::value_column(e, V::kind::head_width), q, h, b);
        core.pack_values = !v.dense_rows;
        if (ctx.knobs.strategy == Strategy::streaming) {
            out = detail::streamed_weighted_sum(core, v, group, ctx, name);
        } else {
            Halide::RDom r(0, p_extents[0], "r");
            const auto key_band = detail::key_band(n.probabilities.scores);
            detail::restrict_to_block_band(r, r, q, {key_band.causal, key_band.window}, ctx.knobs.q_block, 1);
            acc(e, q, h, b) = 0.0f;
            acc(e, q, h, b) += core.exps(r, q, h, b) * core.values(e, r, h / group, b);
            const Halide::Expr z = core.row_sum(q, h, b);
            out(e, q, h, b) = ieee(Halide::select(z == 0.0f, 0.0f, acc(e, q, h, b) / z));
            core.weighted = acc;
        }
        core.output = out;
        ctx.roles.cores.push_back(core);
    } else {  // any other probabilities tensor: P · V as written
        const Lowered p = node(n.probabilities, ctx);
        p_extents = p.extents;
        Halide::RDom r(0, p_extents[0], "r");
        acc(e, q, h, b) = 0.0f;
        acc(e, q, h, b) += p.func(r, q, h, b) * v.func(e, r, h / group, b);
        out(e, q, h, b) = acc(e, q, h, b);
        ctx.roles.projections.push_back({out, acc, {}, 0});
    }
    return {out, {Halide::Expr(V::kind::head_width), p_extents[1], p_extents[2], p_extents[3]}};
}

}  // namespace attnforge::codegen
