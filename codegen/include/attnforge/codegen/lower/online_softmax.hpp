// One key block of the online softmax and its merge into a running state, shared by the streaming and
// decode cores: scores in base 2, m' = max(m, m_b), l' = l·2^(m−m') + l_b·2^(m_b−m'), acc' likewise.
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>

#include <Halide.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace attnforge::codegen::detail {

// The new max and the factors of the old state and of the block. One exp for both factors: the larger
// max gets factor 1, the other 2^(smaller − larger) (0 when the smaller is −∞: an empty state or a
// wholly masked block). Both −∞: nothing yet, both 0.
struct MergeFactors {
    Halide::Expr m_new, keep_old, take_block;
};

inline MergeFactors merge_factors(const Halide::Expr& m_old, const Halide::Expr& m_block) {
    const Halide::Expr inf = minus_infinity();
    const Halide::Expr m_new = Halide::max(m_old, m_block);
    const Halide::Expr smaller = Halide::min(m_old, m_block);
    const Halide::Expr f = ieee(Halide::select(m_new == inf, 0.0f, softmax_exp2(smaller - m_new)));
    return {m_new, ieee(Halide::select(m_old == m_new && m_new != inf, 1.0f, f)),
            ieee(Halide::select(m_old == m_new, f, 1.0f))};
}

// A key block of key_tile keys: its scores (kk, row...) in base 2 (keys past Lk already −∞) give the
// block's max and sum (row...) reduced lane by lane, its exps (kk, row...) and exps · V (e, row...),
// where value(rk) is V at column e for the block's key rk; no value: no exps · V (the caller forms it
// over bf16 pairs of keys). row[0] is the query index. `limit` (optional): the block's keys at and past it
// are neither reduced nor weighted, so nothing computes or reads them (row_reduction.hpp). `value_factor`
// (optional): a factor per key rk its exp is weighed by before V (a quantized V row's scale, value(rk) unscaled), in
// `weights` (kk, row...), a Func of its own so that a schedule makes it a vector of the block's keys: P·V then reads
// each key's weight as one broadcast load, where a product inside the reduction cost a scalar multiply and a
// register broadcast per key and row (two of the ~9 vector instructions a key and row of uint8 P·V at E = 64).
// `key_span` > 1 (with a limit): exps · V's reduction over the keys in spans of that many, (key in span, span),
// with a condition on the span alone besides the key's, so that the loop over spans ends at the limit even where a
// schedule prefetches in the loop over a span's keys. (Halide trims a loop to where its body does something; a
// prefetch guarded by the key's own condition leaves the loop of keys untrimmed (its body is never empty), but the
// spans past the limit skip it whole.)
struct KeyBlock {
    Halide::Func max, max_lanes, exps, sum, sum_lanes, weighted;
    Halide::Func weights;  // exps · value_factor, where there is a value_factor (undefined otherwise)
};

inline KeyBlock key_block(const std::string& name, const Halide::Func& scores, const std::vector<Halide::Var>& row,
                          int key_tile, int lanes, const Halide::Var& e,
                          const std::function<Halide::Expr(const Halide::Expr&)>& value,
                          const Halide::Expr& limit = Halide::Expr(),
                          const std::function<Halide::Expr(const Halide::Expr&)>& value_factor = {},
                          int key_span = 1) {
    const Halide::Expr inf = minus_infinity();
    const Halide::Var kk = scores.args().at(0);
    auto with = [&](const Halide::Expr& first) { return with_first(first, row); };
    KeyBlock k;
    std::tie(k.max, k.max_lanes) = reduce_by_lanes(name + "_block_max", lane_max(), scores, key_tile, row, row.at(0), {},
                                                   1, lanes, limit);
    const Halide::Expr m = k.max(row);
    k.exps = Halide::Func(name + "_block_exps");
    k.exps(with(kk)) = softmax_exp2(scores(with(kk)) - ieee(Halide::select(m == inf, 0.0f, m)));
    std::tie(k.sum, k.sum_lanes) = reduce_by_lanes(name + "_block_sum", lane_sum(), k.exps, key_tile, row, row.at(0),
                                                   {}, 1, lanes, limit);
    if (!value) return k;
    const bool in_spans = key_span > 1 && limit.defined();
    if (in_spans && key_tile % key_span != 0)
        throw std::invalid_argument("attnforge lowering: a key tile of " + std::to_string(key_tile) +
                                    " keys is not a whole number of spans of " + std::to_string(key_span));
    Halide::RDom rk = in_spans ? Halide::RDom(0, key_span, 0, key_tile / key_span, "rk") : Halide::RDom(0, key_tile, "rk");
    const Halide::Expr key = in_spans ? rk.y * key_span + rk.x : Halide::Expr(rk.x);
    // The span's condition as a count of spans: `rk.y * key_span < limit` is implied by the key's, and Halide drops it.
    if (in_spans) rk.where(rk.y < (limit + (key_span - 1)) / key_span);
    if (limit.defined()) rk.where(key < limit);
    k.weighted = Halide::Func(name + "_block_weighted");
    k.weighted(with(e)) = 0.0f;
    if (value_factor) {
        k.weights = Halide::Func(name + "_block_weights");
        k.weights(with(kk)) = k.exps(with(kk)) * value_factor(kk);
    }
    const Halide::Expr weight = value_factor ? k.weights(with(key)) : k.exps(with(key));
    k.weighted(with(e)) += weight * value(key);
    return k;
}

}  // namespace attnforge::codegen::detail
