// P·V over 8-bit codes on integer dot products (Tiles::integer_products; x86's vpdpbusd), for the decode core
// (lower/decode.hpp): per tile and query row, the weights w = exp · V's row scale as a scale σ = max|w| / 127 and
// three int8 digits per key (lower/query_digits.hpp's int8_digit, w ≈ σ·(d₀ + d₁/128 + d₂/128²)); per column e
// and digit an int32 sum Σ code·dᵢ over the tile's keys, four keys a lane: the four keys' codes of 16 columns
// interleaved in registers from four dense row loads (vpermt2b; no packed copy of V), the four keys' digits one
// broadcast, one vpdpbusd per 64 products. Where float32 P·V spends a widening load, a conversion and an FMA per 16
// codes and key, this spends per 16 columns and four keys three permutes and three vpdpbusd (MHA E = 64, one row:
// 27 vector instructions per four keys against 48). The codes are V's unsigned codes (int8 c as c + 128 with a zero
// point of 128), the zero point subtracted once per tile by the decode core (Σ w·(u − zero) = Σ w·u − Σ w·zero).
//
// Accuracy: each weight within σ/2·128⁻² ≈ 2⁻²²·max|w| of its value (exact digits: the remainders computed with
// IEEE semantics), the integer sums exact (|Σ| ≤ 2048·255·127 < 2³¹ over a tile of 2048 keys), each converted to
// float32 once per tile: docs/storage_types.md.
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/query_digits.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace attnforge::codegen::detail {

inline constexpr int value_keys_per_lane = 4;  // the codes vpdpbusd sums into one int32 lane: four keys'
inline constexpr int integer_values_below_rows = 4;  // a task's query rows below which P·V takes this form

struct IntegerValues {
    Halide::Func weight_max, weight_max_lanes;  // (row...): max |w| over the tile's valid keys
    Halide::Func weight_digits;                 // (kk, d, row...) int8, 0 at and past the tile's valid keys
    Halide::Func sums;                          // (e, d, row...) int32: Σ code·dᵢ over the tile's keys
    Halide::Func weighted;                      // (e, row...) float32: σ·(sum₀ + sum₁/128 + sum₂/128²)
};

// `weights` (kk, row...) the tile's weights, `row` = (q, g, hk, b, kb) with q first and kb last; `code_of_key(e, rk)`
// V's unsigned code at column e of the tile's key rk (clamped into the valid keys by the caller: keys past them have
// digits 0, so whatever they hold counts nothing); `valid_keys` the tile's keys below the cache's valid length.
inline IntegerValues integer_weighted_values(const std::string& name, const Halide::Func& weights,
                                             const std::vector<Halide::Var>& row, int key_tile, int lanes,
                                             const Halide::Var& e,
                                             const std::function<Halide::Expr(const Halide::Expr&, const Halide::Expr&)>& code_of_key,
                                             const Halide::Expr& valid_keys) {
    const Halide::Var kk = weights.args().at(0);
    Halide::Var d("d");
    auto with = [&](const std::vector<Halide::Expr>& first) {
        std::vector<Halide::Expr> args(first);
        args.insert(args.end(), row.begin(), row.end());
        return args;
    };
    IntegerValues out;
    Halide::Func magnitude(name + "_weight_magnitude");
    magnitude(with({kk})) = Halide::abs(weights(with({kk})));
    std::tie(out.weight_max, out.weight_max_lanes) = reduce_by_lanes(
        name + "_weight_max", lane_max(), magnitude, key_tile, row, row.at(0), {}, 1, lanes, valid_keys);
    const Halide::Expr largest = out.weight_max(row);
    // σ; 1 for a tile whose weights are all 0 (its digits are then 0).
    const Halide::Expr scale = ieee(Halide::select(largest > 0.0f, largest / 127.0f, 1.0f));
    out.weight_digits = Halide::Func(name + "_weight_digits");
    out.weight_digits(with({kk, d})) = Halide::select(kk < valid_keys, int8_digit(weights(with({kk})) / scale, d),
                                                      Halide::cast<int8_t>(0));
    // Four keys a lane, each code read from its own key's row (four dense loads that interleave, as the pairs of bf16
    // P·V: a key computed from the lane's element would make the load a gather).
    Halide::RDom r(0, value_keys_per_lane, 0, (key_tile + value_keys_per_lane - 1) / value_keys_per_lane, "rk");
    r.where(value_keys_per_lane * r.y < valid_keys);
    const Halide::Expr first = value_keys_per_lane * r.y;
    const Halide::Expr code = Halide::select(r.x == 0, code_of_key(e, first), r.x == 1, code_of_key(e, first + 1),
                                             r.x == 2, code_of_key(e, first + 2), code_of_key(e, first + 3));
    out.sums = Halide::Func(name + "_integer_sums");
    out.sums(with({e, d})) = 0;
    out.sums(with({e, d})) += Halide::cast<int32_t>(code) * Halide::cast<int32_t>(out.weight_digits(with({first + r.x, d})));
    out.weighted = Halide::Func(name + "_integer_weighted");
    out.weighted(with({e})) = scale * digits_value([&](int i) { return out.sums(with({e, i})); });
    return out;
}

}  // namespace attnforge::codegen::detail
