// The score product of an attention pattern: S = scale · Q·Kᵀ, optionally in base 2 (·log2(e), where
// only masks lie between it and the softmax: lower/softmax_exp.hpp), its reduction over e, and K packed
// in panels. Lowered by lower/attention.hpp for its pattern only, never memoized apart from it.
#pragma once

#include <attnforge/codegen/lower/bf16_pairs.hpp>
#include <attnforge/codegen/lower/node.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>

#include <stdexcept>
#include <string>

namespace attnforge::codegen {

// How one pattern's product is made: in base 2 or not, and the band of keys a whole query tile can
// see (key panels outside it are never multiplied; no band: every panel).
struct ScoreProductShape {
    bool base2 = false;
    dsl::key_band skipped_band;
};

namespace detail {

template <class Q, class K>
std::pair<ScoreProduct, Lowered> lower_score_product(const dsl::score_node<Q, K>& n, const ScoreProductShape& shape,
                                                     LoweringContext& ctx) {
    // Q and K are lowered as they would be anywhere else, so that a sub-graph they share with V (a
    // LayerNorm) stays one Func.
    const Lowered q = Lower::node(n.q, ctx), k = Lower::node(n.k, ctx);
    constexpr int Hq = Q::kind::heads, Hkv = K::kind::heads;
    constexpr int group = Hq == dsl::runtime_heads ? 1 : Hq / Hkv;
    const std::string name = ctx.name("score");
    const Tiles& tiles = ctx.tiles();
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    constexpr int E = Q::kind::head_width;
    const float scale = static_cast<float>(n.effective_scale() * (shape.base2 ? log2_e : 1.0));
    const std::vector<Halide::Expr> extents{k.extents[1], q.extents[1], q.extents[2], q.extents[3]};
    if (std::holds_alternative<DecodePlan>(ctx.plan)) {
        if (E % tiles.lanes != 0)
            throw std::invalid_argument(
                "attnforge lowering: the decode strategy reduces the score product lane by "
                "lane along E; the head width E = " +
                std::to_string(E) + " is not a multiple of the vector lanes (" + std::to_string(tiles.lanes) + ")");
        // Decoding: K read in place, one key row at a time (no packing: the cache is streamed once).
        const Halide::Expr query = Halide::clamp(qi, 0, q.extents[1] - 1), key = Halide::clamp(kv, 0, k.extents[1] - 1);
        const bool stored_pairs = tiles.bf16_products && q.stored && k.stored;
        // A group of query heads sharing a KV head (GQA), with lanes = group · chunk, chunk ≥ 2: the heads
        // along the vector. Lane (x, g) sums the columns of head g whose index ≡ x (mod chunk): each product
        // multiplies a chunk of a K row (16 bytes, one broadcast load to every head's lanes) by the group's
        // Q columns (staged once per tile, dense), and c splits the columns into four accumulators a key, so
        // that four keys are 16 independent chains that walk each K row in address order. A key's scores
        // are then its four accumulators added and each head's chunk lanes summed: a few instructions for
        // the whole group, where lanes along E need a fold of ~10 instructions a key and head.
        const int chunk = group > 1 && tiles.lanes >= 16 && tiles.lanes % group == 0 ? tiles.lanes / group : 0;
        // Where the schedule takes several query rows inside the keys (DecodePlan::query_rows), their products
        // are the independent chains: one accumulator a key and row (c of extent 1), so that each step loads
        // a chunk of K per key and a vector of Q per row for keys × rows FMAs.
        const int query_rows = std::get<DecodePlan>(ctx.plan).query_rows;
        const int step_accumulators = query_rows > 1 ? 1 : 4;
        const int columns_per_step = step_accumulators * chunk * (stored_pairs ? 2 : 1);
        if (chunk >= 2 && E % columns_per_step == 0) {
            Halide::Var x("x"), g("g"), c("c"), hk("hk"), pair("pair"), idx("idx");
            Halide::Func per_lane(name + "_head_lanes"), queries(name + "_queries_in_lanes"), sum(name + "_sum"),
                f(name);
            per_lane(x, g, c, kv, qi, hk, b) = 0.0f;
            if (stored_pairs) {
                // Pairs of bf16 as stored (lower/bf16_pairs.hpp): lane (x, g) sums the pairs whose index ≡ x.
                queries(pair, x, g, idx, qi, hk, b) = q.stored({2 * (idx * chunk + x) + pair, query, hk * group + g, b});
                Halide::RDom r(0, 2, 0, E / columns_per_step, "r");
                const Halide::Expr index = r.y * step_accumulators + c;
                per_lane(x, g, c, kv, qi, hk, b) += pair_product(queries(r.x, x, g, index, qi, hk, b),
                                                                 k.stored({2 * (index * chunk + x) + r.x, key, hk, b}));
            } else {
                queries(x, g, idx, qi, hk, b) = q.func(idx * chunk + x, query, hk * group + g, b);
                Halide::RDom r(0, E / columns_per_step, "r");
                const Halide::Expr index = r * step_accumulators + c;
                per_lane(x, g, c, kv, qi, hk, b) +=
                    queries(x, g, index, qi, hk, b) * k.func(index * chunk + x, key, hk, b);
            }
            // A key's four accumulators added (vectors of the (x, g) lanes), then four keys' chunk lanes
            // summed into one vector of (key, head) lanes: per four keys a few shuffles and adds, where a sum
            // written per key and head went lane by lane (~60 instructions a key).
            Halide::Func accumulated(name + "_accumulated"), fold(name + "_fold");
            // Added strictly: under fast-math LLVM otherwise merges the four accumulators into one chain of
            // dependent FMAs per key (E/chunk of them, 4 cycles apiece).
            accumulated(x, g, kv, qi, hk, b) = ieee(combine_lanes(
                lane_sum(), [&](int i) { return per_lane(x, g, i, kv, qi, hk, b); }, step_accumulators));
            Halide::Var kk("kk"), ko("ko");
            fold(kk, g, ko, qi, hk, b) = combine_lanes(
                lane_sum(), [&](int j) { return accumulated(j, g, ko * 4 + kk, qi, hk, b); }, chunk);
            sum(kv, qi, h, b) = fold(kv % 4, h % group, kv / 4, qi, h / group, b);
            f(kv, qi, h, b) = sum(kv, qi, h, b) * scale;
            ScoreProduct product{f, sum, Halide::Func(), per_lane, fold, queries};
            product.column_sums = accumulated;
            product.heads_in_lanes = true;
            product.query_rows = query_rows;
            product.key_buffer = k.parameter;
            return {product, Lowered{f, extents, false, {}}};
        }
        // Lane u of per_lane sums the columns e ≡ u (mod lanes), whole vectors of Q and K rows; the
        // lanes combine in expressions (below), no loop over them.
        Halide::Var u("u");
        Halide::Func per_lane(name + "_lanes"), sum(name + "_sum"), f(name);
        per_lane(u, kv, qi, h, b) = 0.0f;
        if (stored_pairs && E % (2 * tiles.lanes) == 0) {
            // bf16 Q and K as stored: a row of K holds its pairs of e adjacent already, so lane u sums the
            // pairs (2c, 2c + 1) with c ≡ u (mod lanes), one vdpbf16ps per 32 columns, no conversion (the
            // schedule vectorizes the pair element with atomic(): lower/bf16_pairs.hpp).
            Halide::RDom eo(0, 2, 0, E / (2 * tiles.lanes), "eo");
            const Halide::Expr column = 2 * (eo.y * tiles.lanes + u) + eo.x;
            per_lane(u, kv, qi, h, b) +=
                pair_product(q.stored({column, query, h, b}), k.stored({column, key, h / group, b}));
        } else {
            Halide::RDom eo(0, E / tiles.lanes, "eo");
            const Halide::Expr column = eo * tiles.lanes + u;
            per_lane(u, kv, qi, h, b) += q.func(column, query, h, b) * k.func(column, key, h / group, b);
        }
        // The lanes combine in two steps: folded to four (lane j adds lanes j, j + 4, ...: whole-vector adds
        // of a vector's quarters), then the four quarters of four keys added as vectors of keys (a 4×4
        // transpose). A tree down to each key's scalar cost 20 instructions a key and row on Zen 4, most of
        // decode_gqa's Q·Kᵀ.
        if (tiles.lanes % 4 != 0)
            throw std::invalid_argument("attnforge lowering: the decode strategy needs a multiple of 4 vector lanes, got " +
                                        std::to_string(tiles.lanes));
        Halide::Var j("j");
        Halide::Func fold(name + "_fold");
        fold(j, kv, qi, h, b) = combine_lanes(
            lane_sum(), [&](int m) { return per_lane(j + 4 * m, kv, qi, h, b); }, tiles.lanes / 4);
        sum(kv, qi, h, b) = combine_lanes(
            lane_sum(), [&](int m) { return fold(m, kv, qi, h, b); }, 4);
        f(kv, qi, h, b) = sum(kv, qi, h, b) * scale;
        ScoreProduct product{f, sum, Halide::Func(), per_lane, fold};
        return {product, Lowered{f, extents, false, {}}};
    }
    const int P = tiles.key_panel;  // keys per score tile and per packed K panel
    // Pairs of bf16 along e (lower/bf16_pairs.hpp) where Q and K are the kernel's own bf16 inputs, so that
    // the products are exact, as float32 ones on those inputs. A computed Q or K (a projection, RoPE) stays
    // float32: rounded to bf16, its relative error 2⁻⁹ becomes an error of 2⁻⁹·S in the logits, beyond
    // docs/contract.md §5's bf16 bound once S reaches ~10³ (measured: mha's large-logit cases, 92 > 1.2).
    if (tiles.bf16_products && E % 2 == 0 && q.buffer && k.buffer) {
        // K packed as keys(pair, kk, e/2, kt), the P keys of a panel with their pairs adjacent (one vector
        // of 32 bf16 per pair index), Q staged in bf16 once per query tile.
        Halide::RDom e = pair_reduction(E, "e");
        restrict_to_block_band(e, kv, qi, shape.skipped_band, tiles.query_tile, P);
        Halide::Var pair("pair"), kk("kk"), ke("e"), kt("kt");
        Halide::Func keys(name + "_keys"), queries(name + "_queries"), sum(name + "_sum"), f(name);
        keys(pair, kk, ke, kt, h, b) =
            round_to_bf16(k.func(2 * ke + pair, Halide::clamp(kt * P + kk, 0, k.extents[1] - 1), h, b));
        queries(ke, qi, h, b) = round_to_bf16(q.func(ke, Halide::clamp(qi, 0, q.extents[1] - 1), h, b));
        sum(kv, qi, h, b) = 0.0f;
        sum(kv, qi, h, b) +=
            pair_product(queries(2 * e.y + e.x, qi, h, b), keys(e.x, kv % P, e.y, kv / P, h / group, b));
        f(kv, qi, h, b) = sum(kv, qi, h, b) * scale;
        ScoreProduct product{f, sum, keys, Halide::Func()};
        product.queries = queries;
        return {product, Lowered{f, extents, false, {}}};
    }
    Halide::RDom e(0, E, "e");
    // Under a causal or sliding-window band (materialized): key panels (the score tile's width) outside
    // the band of the query tile are never multiplied; their sums stay 0 and the mask makes them −∞.
    restrict_to_block_band(e, kv, qi, shape.skipped_band, tiles.query_tile, P);
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
    sum(kv, qi, h, b) +=
        q.func(e, Halide::clamp(qi, 0, q.extents[1] - 1), h, b) * keys(kv % P, e, kv / P, h / group, b);
    f(kv, qi, h, b) = sum(kv, qi, h, b) * scale;
    // extents: (Lk, Lq, Hq, B)
    return {ScoreProduct{f, sum, keys, Halide::Func()}, Lowered{f, extents, false, {}}};
}

}  // namespace detail

template <class Node>
requires(dsl::is_a<Node, dsl::score_tag> || dsl::is_a<Node, dsl::mask_tag> ||
         dsl::is_a<Node, dsl::modify_tag>) Lowered Lower::impl(const Node& n, LoweringContext&) {
    throw std::invalid_argument("attnforge lowering: raw scores (" + dsl::canonical(n) +
                                ") outside a softmax have no kernel: a graph's result is an attention output, "
                                "a softmax's weights or a tensor computed from them");
}

}  // namespace attnforge::codegen
