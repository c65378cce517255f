// Products on AMX tiles (Tiles::amx_products): Halide lowers a reduction to tdpbf16ps where it reads, after
// vectorization, a 16-row tile A(r, y) of bf16 dense along r and a tile B(r % 2, x, r / 2) in the "VNNI"
// layout (the two elements of each pair of r adjacent, then x), and accumulates into a Func stored in
// MemoryType::AMXTile (Halide's ExtractTileOperations). Its matcher recognizes the right operand only as a
// three-dimensional buffer indexed (pair, x, r / 2 + offset), so the packed operands here are 3-D Funcs
// whose third axis folds the outer indices (panel, head, batch) into one row index. The accumulators and
// the tile loops are the schedule's (src/schedules/: amx_tile_product).
//
// On the roundings: the same as the vdpbf16ps products (lower/bf16_pairs.hpp): Q, K, V the kernel's own bf16
// inputs (exact) or projections rounded to bf16, P rounded where it meets V; AMX treats bf16 subnormal inputs as
// zero, as vdpbf16ps does.
#pragma once

#include <attnforge/codegen/lower/bf16_pairs.hpp>

#include <Halide.h>

#include <string>

namespace attnforge::codegen::detail {

// An AMX tile product: at most 16 rows, 16 float32 columns and 32 bf16 along the reduction per instruction.
inline constexpr int amx_rows = 16, amx_columns = 16, amx_depth = 32;

// Whether a reduction over `length` values can be made of whole tile steps.
inline bool amx_fits(int length) {
    return length > 0 && length % amx_depth == 0;
}

// A reduction in AMX steps: x the 32 values of one step (innermost, vectorized by the schedule), y the steps.
inline Halide::RDom amx_reduction(const Halide::Expr& steps, const std::string& name) {
    return Halide::RDom(0, amx_depth, 0, steps, name);
}

// Where an amx_reduction's value sits in a right operand packed in pairs, (r % 2, x, pair index): its pair
// counted from the first step's (the operand's row before any offset of panels, heads or blocks).
inline Halide::Expr amx_pair_index(const Halide::RDom& r) {
    return r.x / 2 + (amx_depth / 2) * r.y;
}

// A panel row of keys: K packed as (pair, kk, row) with 16 keys kk per panel and
// row = e/2 + E/2 · (panel + panels · (h + Hkv · b)): each tile of 16 keys by 32 values of e is 1 KiB
// of contiguous memory. `element(e, key, h, b)`: K's value (float32, exact for a bf16 input).
struct AmxKeyPanels {
    Halide::Func keys;
    Halide::Expr panels;  // ⌈Lk / 16⌉
    int half_width = 0;   // E / 2
    Halide::Expr rows;    // every row: E/2 · panels · Hkv · B (the schedule bounds the Func to them, from 0)
    // The row of pair index e2 (e = 2·e2 + pair) of key panel `panel` of KV head h, batch entry b.
    Halide::Expr row(const Halide::Expr& e2, const Halide::Expr& panel, const Halide::Expr& h, const Halide::Expr& b,
                     const Halide::Expr& kv_heads) const {
        return e2 + half_width * (panel + panels * (h + kv_heads * b));
    }
};

template <class Element>
AmxKeyPanels amx_key_panels(const Element& element, int E, const Halide::Expr& Lk, const Halide::Expr& kv_heads,
                            const Halide::Expr& batch, const std::string& name) {
    AmxKeyPanels p;
    p.half_width = E / 2;
    p.panels = (Lk + (amx_columns - 1)) / amx_columns;
    p.rows = p.half_width * p.panels * kv_heads * batch;
    Halide::Var pair("pair"), kk("kk"), row("row");
    const Halide::Expr e2 = row % p.half_width, panel = (row / p.half_width) % p.panels,
                       head_and_batch = row / p.half_width / p.panels;
    const Halide::Expr h = head_and_batch % kv_heads, b = head_and_batch / kv_heads;
    p.keys = Halide::Func(name + "_amx_keys");
    p.keys(pair, kk, row) =
        round_to_bf16(element(2 * e2 + pair, Halide::clamp(panel * amx_columns + kk, 0, Lk - 1), h, b));
    return p;
}

// V packed as (pair, e, row), row = key/2 + pairs · (h + Hkv · b) with pairs = ⌈Lk / granule⌉ · granule/2 (the
// keys a P·V reads: whole steps of 32, or whole streamed key tiles): the two keys of a pair adjacent, zero past
// Lk (so that the last step's weights past Lk, finite, add nothing).
// `stored(e, key, h, b)`: V as the kernel's bf16 input, or undefined: `values` (float32) rounded.
struct AmxValuePairs {
    Halide::Func values;
    Halide::Expr pairs;  // rows per (head, batch entry)
    Halide::Expr rows;   // every row: pairs · Hkv · B
    Halide::Expr row(const Halide::Expr& pair_index, const Halide::Expr& h, const Halide::Expr& b,
                     const Halide::Expr& kv_heads) const {
        return pair_index + pairs * (h + kv_heads * b);
    }
};

inline AmxValuePairs amx_value_pairs(const Halide::Func& stored, const Halide::Func& values, const Halide::Expr& Lk,
                                     const Halide::Expr& kv_heads, const Halide::Expr& batch, int granule,
                                     const std::string& name) {
    AmxValuePairs p;
    p.pairs = (Lk + (granule - 1)) / granule * (granule / 2);
    p.rows = p.pairs * kv_heads * batch;
    Halide::Var pair("pair"), e("e"), row("row");
    const Halide::Expr k2 = row % p.pairs, hb = row / p.pairs;
    const Halide::Expr h = hb % kv_heads, b = hb / kv_heads;
    const Halide::Expr key = 2 * k2 + pair, clamped = Halide::min(key, Lk - 1);
    p.values = Halide::Func(name + "_amx_values");
    if (stored.defined())
        p.values(pair, e, row) =
            Halide::select(key < Lk, stored(e, clamped, h, b), Halide::cast(Halide::BFloat(16), 0.0f));
    else
        p.values(pair, e, row) = round_to_bf16(Halide::select(key < Lk, values(e, clamped, h, b), 0.0f));
    return p;
}

}  // namespace attnforge::codegen::detail
