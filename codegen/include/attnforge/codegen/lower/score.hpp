// The score product of an attention pattern: S = scale · Q·Kᵀ, optionally in base 2 (·log2(e), where
// only masks lie between it and the softmax: lower/softmax_exp.hpp), its reduction over e, and K packed
// in panels. K is read through its source's accessor (lower/kv_source.hpp). Lowered by lower/attention.hpp
// for its pattern only, never memoized apart from it.
#pragma once

#include <attnforge/codegen/lower/amx_tiles.hpp>
#include <attnforge/codegen/lower/bf16_pairs.hpp>
#include <attnforge/codegen/lower/decode_product.hpp>
#include <attnforge/codegen/lower/head_group.hpp>
#include <attnforge/codegen/lower/kv_source.hpp>
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
    KeyBand skipped_band;
};

// The product, the scores it gives (Lk, Lq, Hq, B) and the keys it read.
struct LoweredScores {
    ScoreProduct product;
    Lowered scores;
    KeyValueSource keys;
};

namespace detail {

template <class Q, class K, class S, class KeySource>
LoweredScores lower_score_product(const dsl::score_node<Q, K, S>& n, const KeySource& key_source,
                                  const ScoreProductShape& shape, LoweringContext& ctx) {
    // Q first, then the keys' source: each lowered as it would be anywhere else, so that a sub-graph they
    // share with V (a LayerNorm) stays one Func.
    const Lowered q = Lower::node(n.q, ctx);
    const KeyValueSource k = Lower::source(key_source, ctx);
    constexpr int Hq = Q::kind::heads, Hkv = K::kind::heads;
    const HeadGroup group = head_group<Hq, Hkv>(q.extents[2], k.extents[2]);
    const std::string name = ctx.name("score");
    const Tiles& tiles = ctx.tiles();
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    const int E = ctx.head_width_of(Q::kind::head_width);
    // The scale: the graph's constant, or its scale input's value (one float32 per call; the runtime passes 1/√E
    // where the call gives none), times log2(e) in base 2.
    const double base = shape.base2 ? log2_e : 1.0;
    Halide::Expr scale;
    if constexpr (dsl::score_node<Q, K, S>::runtime_scale)
        scale = Lower::node(n.scale_input, ctx).func() * static_cast<float>(base);
    else
        scale = Halide::Expr(static_cast<float>(n.effective_scale(E) * base));
    const std::vector<Halide::Expr> extents{k.extents[1], q.extents[1], q.extents[2], q.extents[3]};
    if (const auto* decode = std::get_if<DecodePlan>(&ctx.plan)) {
        const ScoreProduct product = detail::decode_score_product(q, k, E, group, scale, *decode, name);
        return {product, Lowered{product.scaled, extents, false, {}}, k};
    }
    const int P = tiles.key_panel;  // keys per score tile and per packed K panel
    // Pairs of bf16 along e (lower/bf16_pairs.hpp) where Q and K have a bf16 form (Lowered::stored): the kernel's
    // own bf16 inputs, whose products are then exact, or projections rounded to bf16 (lower/linear.hpp: an error
    // of up to 2⁻⁸·S in the logits, which docs/contract.md §5's term for rounded operands allows). RoPE's Q and K
    // stay float32.
    if (tiles.amx_products && amx_fits(E) && tiles.query_tile % amx_rows == 0 && q.stored && k.stored) {
        // As the pairs below, on AMX tiles: K in panels of 16 keys (one tile's columns), Q staged in bf16 once per
        // query tile (whole tiles of rows: a query tile of 8 would compute 16 rows), the band skipped per panel.
        const Halide::Expr kv_heads = k.extents[2];
        const AmxKeyPanels panels =
            amx_key_panels([&](const Halide::Expr& ke, const Halide::Expr& key, const Halide::Expr& hk,
                               const Halide::Expr& bk) { return k.element(ke, key, hk, bk); },
                           E, k.extents[1], kv_heads, k.extents[3], name);
        Halide::RDom e = amx_reduction(E / amx_depth, "e");
        Halide::Var ke("e");
        Halide::Func queries(name + "_queries"), sum(name + "_sum"), f(name);
        queries(ke, qi, h, b) = round_to_bf16(q.func(ke, Halide::clamp(qi, 0, q.extents[1] - 1), h, b));
        // The sum by key panel and query tile: (kk, kt, qq, qt, h, b), key kt·16 + kk, query qt·query_tile + qq,
        // so that a tile's indices are kk and qq alone (Halide's matcher needs the operands' indices affine in the
        // lanes; it does not see through kv % 16 of a tile), and a band skips panels by (kt, qt), the loops
        // outside the tiles (a condition on a tile's lanes would unvectorize it). Panels past the last (a streamed
        // key tile rounded up past Lk) read the last one: the streaming strategy masks scores past Lk, and the
        // materialized one never reduces them and meets their weights with zero values.
        Halide::Var kk("kk"), kt("kt"), qq("qq"), qt("qt");
        const int Qt = tiles.query_tile;
        restrict_to_block_band(e, kt * amx_columns, qt * Qt, shape.skipped_band, Qt, amx_columns);
        const Halide::Expr pair_index = amx_pair_index(e);
        sum(kk, kt, qq, qt, h, b) = 0.0f;
        sum(kk, kt, qq, qt, h, b) += pair_product(
            queries(amx_depth * e.y + e.x, qt * Qt + qq, h, b),
            panels.keys(e.x % 2, kk,
                        panels.row(pair_index, Halide::min(kt, panels.panels - 1), group.kv_head(h), b, kv_heads)));
        f(kv, qi, h, b) = sum(kv % amx_columns, kv / amx_columns, qi % Qt, qi / Qt, h, b) * scale;
        ScoreProduct product{f, sum, panels.keys, Halide::Func(), {}};
        product.queries = queries;
        product.amx_tiles = true;
        product.amx_key_rows = panels.rows;
        return {product, Lowered{f, extents, false, {}}, k};
    }
    if (tiles.bf16_products && E % 2 == 0 && q.stored && k.stored) {
        // K packed as keys(pair, kk, e/2, kt), the P keys of a panel with their pairs adjacent (one vector
        // of 32 bf16 per pair index), Q staged in bf16 once per query tile.
        Halide::RDom e = pair_reduction(E, "e");
        restrict_to_block_band(e, kv, qi, shape.skipped_band, tiles.query_tile, P);
        Halide::Var pair("pair"), kk("kk"), ke("e"), kt("kt");
        Halide::Func keys(name + "_keys"), queries(name + "_queries"), sum(name + "_sum"), f(name);
        keys(pair, kk, ke, kt, h, b) =
            round_to_bf16(k.element(2 * ke + pair, Halide::clamp(kt * P + kk, 0, k.extents[1] - 1), h, b));
        queries(ke, qi, h, b) = round_to_bf16(q.func(ke, Halide::clamp(qi, 0, q.extents[1] - 1), h, b));
        sum(kv, qi, h, b) = 0.0f;
        sum(kv, qi, h, b) +=
            pair_product(queries(2 * e.y + e.x, qi, h, b), keys(e.x, kv % P, e.y, kv / P, group.kv_head(h), b));
        f(kv, qi, h, b) = sum(kv, qi, h, b) * scale;
        ScoreProduct product{f, sum, keys, Halide::Func(), {}};
        product.queries = queries;
        return {product, Lowered{f, extents, false, {}}, k};
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
    keys(kk, ke, kt, h, b) = k.element(ke, Halide::clamp(kt * P + kk, 0, k.extents[1] - 1), h, b);
    // A 16-bit Q input is converted once per task into float32 rows (ScoreProduct::converted_queries), not at
    // each of the register tiles' broadcasts of it.
    Halide::Func converted_queries;
    Halide::Func queries = q.func;
    if (q.parameter.defined() && q.parameter.type() != Halide::Float(32)) {
        converted_queries = Halide::Func(name + "_queries_f32");
        converted_queries(ke, qi, h, b) = q.func(ke, qi, h, b);
        queries = converted_queries;
    }
    sum(kv, qi, h, b) +=
        queries(e, Halide::clamp(qi, 0, q.extents[1] - 1), h, b) * keys(kv % P, e, kv / P, group.kv_head(h), b);
    f(kv, qi, h, b) = sum(kv, qi, h, b) * scale;
    // extents: (Lk, Lq, Hq, B)
    ScoreProduct product{f, sum, keys, Halide::Func(), {}};
    product.converted_queries = converted_queries;
    return {product, Lowered{f, extents, false, {}}, k};
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
