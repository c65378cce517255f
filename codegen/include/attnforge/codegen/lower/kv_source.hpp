// A K or V source (dsl/kv_source.hpp), lowered into the one accessor the attention core reads it by: the
// score product (lower/score.hpp), the decode product (lower/decode_product.hpp), P·V (lower/attention.hpp)
// and the decode schedule's prefetch read keys and values through a KeyValueSource only, never through the
// K or V node. A new rows type (pages with a block table; codes with scales: lower/dequantize.hpp) is a
// Lower::rows overload that fills the same fields: the products and schedules then take it as they are.
#pragma once

#include <attnforge/codegen/lower/node.hpp>

namespace attnforge::codegen {

// Dense rows: the node lowered as anywhere else, so that a sub-graph K or V shares with Q (a LayerNorm)
// stays one Func, and an input read through the generator's accessor (converted to float32 where read, bf16
// also as stored).
template <class Node>
KeyValueSource Lower::rows(const dsl::dense_rows<Node>& rows, LoweringContext& ctx) {
    const Lowered lowered = node(rows.node, ctx);
    KeyValueSource source;
    source.element = [f = lowered.func](const Halide::Expr& e, const Halide::Expr& key, const Halide::Expr& h,
                                        const Halide::Expr& b) { return f(e, key, h, b); };
    if (lowered.stored)
        source.stored = [stored = lowered.stored](const Halide::Expr& e, const Halide::Expr& key,
                                                  const Halide::Expr& h, const Halide::Expr& b) {
            return stored({e, key, h, b});
        };
    source.extents = lowered.extents;
    source.dense_rows = lowered.dense_rows;
    source.row_buffer = lowered.parameter;
    return source;
}

// The rows, then which of them hold keys: a cache's lengths read from the input buffer itself, so that
// conditions on them become loop bounds.
template <class Rows, class Valid>
KeyValueSource Lower::source(const dsl::kv_source<Rows, Valid>& source, LoweringContext& ctx) {
    KeyValueSource lowered = rows(source.rows, ctx);
    if constexpr (dsl::kv_source<Rows, Valid>::cached) {
        const Lowered lengths = node(source.valid, ctx);
        lowered.valid_keys = [buffer = lengths.buffer](const Halide::Expr& b) { return buffer({b}); };
    }
    return lowered;
}

}  // namespace attnforge::codegen
