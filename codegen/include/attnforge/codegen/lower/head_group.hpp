// The query heads that share one key/value head (grouped-query attention): H / Hkv. Fixed when the graph
// fixes both head counts; read from the inputs' extents when Hkv is a run-time count (dsl::runtime_kv_heads),
// so that one kernel serves MHA, GQA and MQA. Query head h reads key/value head h / group: where the group is
// run-time, a division per head, outside every loop over keys and columns (the heads loop is outermost).
#pragma once

#include <attnforge/dsl/kinds.hpp>

#include <Halide.h>

namespace attnforge::codegen {

struct HeadGroup {
    // The group where the graph fixes it; 1 where it is run-time (the decode strategy lays a fixed group's heads
    // along the vector lanes, lower/decode_product.hpp; a run-time group's heads become query rows of their KV
    // head, lower/decode.hpp).
    int fixed = 1;
    // H / Hkv at run time (at least 1); undefined where the group is fixed.
    Halide::Expr runtime;

    // The key/value head query head h reads.
    Halide::Expr kv_head(const Halide::Expr& h) const {
        if (runtime.defined()) return h / runtime;
        return fixed == 1 ? h : h / fixed;
    }

    // The decode strategy's rows of a KV head (lower/decode.hpp): a run-time group's heads are query rows, row r
    // being query r % Lq of query head hk · group + r / Lq; elsewhere the rows are the Lq queries of one head.
    Halide::Expr rows(const Halide::Expr& Lq) const { return runtime.defined() ? runtime * Lq : Lq; }
    Halide::Expr query_of_row(const Halide::Expr& r, const Halide::Expr& Lq) const {
        return runtime.defined() ? r % Lq : r;
    }
    // Defined where the group is run-time only.
    Halide::Expr head_of_row(const Halide::Expr& hk, const Halide::Expr& r, const Halide::Expr& Lq) const {
        return hk * runtime + r / Lq;
    }
    // The row of query q of query head h in its KV head's task.
    Halide::Expr row_of(const Halide::Expr& h, const Halide::Expr& q, const Halide::Expr& Lq) const {
        return runtime.defined() ? (h % runtime) * Lq + q : q;
    }
};

// The group of a pattern whose queries have Hq heads and keys Hkv (static counts, or dsl::runtime_heads /
// dsl::runtime_kv_heads), the run-time counts being the extents query_heads and kv_heads.
template <int Hq, int Hkv>
HeadGroup head_group(const Halide::Expr& query_heads, const Halide::Expr& kv_heads) {
    if constexpr (Hkv == dsl::runtime_kv_heads)
        return {1, Halide::max(query_heads / Halide::max(kv_heads, 1), 1)};
    else if constexpr (Hq == dsl::runtime_heads)
        return {1, Halide::Expr()};
    else
        return {Hq / Hkv, Halide::Expr()};
}

}  // namespace attnforge::codegen
