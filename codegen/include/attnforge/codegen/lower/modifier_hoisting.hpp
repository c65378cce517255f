// Score modifiers with their terms of the key alone or of the query-key distance alone hoisted out of the score
// loop. A term that depends on the query and the key only through their distance q_idx − kv_idx (and on h, b) — a
// T5 bucket and its bias, ALiBi's slope times |q_idx − kv_idx|, a clipped relative bias — is one value per
// distance: it becomes a table (d, h, b) computed once per call (Roles::distance_tables), read at
// d = q_idx − kv_idx. Along a vector of consecutive keys that index falls by one per lane, so the read is a vector
// load (reversed) where the term was a gather from its input and a float64 computation of the index per score.
// A term of the key alone (a per-key penalty log(kv_idx + 1)) becomes a table (k, h, b) the same way, read by a
// vector load at the key. Terms of the query alone need nothing: they do not change along the keys, and Halide
// lifts them out of the loop over the keys.
#pragma once

#include <attnforge/codegen/lower/expressions.hpp>

namespace attnforge::codegen {

// A value of the modifier's expression and what it depends on.
struct TrackedExpr {
    enum : unsigned { score = 1, query = 2, key = 4, distance = 8 };
    Halide::Expr e;
    unsigned uses = 0;   // of the bits above; h and b are free (a table is indexed by them)
    int operations = 0;  // in its subtree (0: a placeholder or a constant); a bare distance is not worth a table

    bool is_placeholder(unsigned which) const { return uses == which && operations == 0; }
};

// What makes the tables: the Vars the placeholders are written with, and where the tables go.
struct DistanceTables {
    std::string query_var, key_var;                     // q and k of the scores (k, q, h, b)
    std::function<Halide::Expr(const Halide::Expr& b)> query_offset;  // q_idx = q + query_offset(b)
    Halide::Var h, b;
    LoweringContext* ctx;  // names the tables and keeps them in its roles

    // term(q_idx, kv_idx, h, b) as a table of the distance, read at q_idx − kv_idx: term(d + k, k) = term(d, 0).
    Halide::Expr hoist_distance(const Halide::Expr& term, const Halide::Expr& q_idx, const Halide::Expr& kv_idx) const {
        using Halide::Internal::substitute;
        Halide::Var d("d");
        Halide::Func table(ctx->name("distance_table"));
        table(d, h, b) = substitute(key_var, Halide::Expr(0), substitute(query_var, d - query_offset(b), term));
        ctx->roles.distance_tables.push_back(table);
        return table(q_idx - kv_idx, h, b);
    }

    // term(kv_idx, h, b) as a table of the key, read at kv_idx.
    Halide::Expr hoist_key(const Halide::Expr& term, const Halide::Expr& kv_idx) const {
        Halide::Var k("key");
        Halide::Func table(ctx->name("key_table"));
        table(k, h, b) = Halide::Internal::substitute(key_var, k, term);
        ctx->roles.distance_tables.push_back(table);
        return table(kv_idx, h, b);
    }
};

struct HoistingBackend {
    HalideBackend inner;
    const DistanceTables* tables;

    HoistingBackend indices() const { return {inner.indices(), tables, q_idx, kv_idx}; }

    TrackedExpr constant(double v) const { return {inner.constant(v)}; }

    template <class In, class... V>
    TrackedExpr read(In in, V... index) const {
        return {inner.read(in, index.e...), (index.uses | ... | 0u), (index.operations + ... + 1)};
    }

    template <class Op, class... A>
    TrackedExpr call(Op op, A... a) const {
        unsigned uses = (a.uses | ... | 0u);
        if constexpr (std::is_same_v<Op, dsl::ex::op::sub> && sizeof...(A) == 2) {
            const TrackedExpr x[] = {a...};
            const bool query_key = x[0].is_placeholder(TrackedExpr::query) && x[1].is_placeholder(TrackedExpr::key);
            const bool key_query = x[0].is_placeholder(TrackedExpr::key) && x[1].is_placeholder(TrackedExpr::query);
            if (query_key || key_query) uses = TrackedExpr::distance;
        }
        // Where this operation mixes the score, the query, the key or the distance, each operand that is a term of
        // the distance alone or of the key alone (more than the placeholder itself) becomes a table.
        const unsigned placeholders = uses & (TrackedExpr::query | TrackedExpr::key | TrackedExpr::distance);
        const bool mixes = (uses & TrackedExpr::score) || (placeholders & (placeholders - 1)) != 0;
        auto operand = [&](const TrackedExpr& x) {
            if (!mixes || x.operations <= 1) return x.e;
            if (x.uses == TrackedExpr::distance) return tables->hoist_distance(x.e, q_idx, kv_idx);
            if (x.uses == TrackedExpr::key) return tables->hoist_key(x.e, kv_idx);
            return x.e;
        };
        return {inner.call(op, operand(a)...), uses, (a.operations + ... + 1)};
    }

    Halide::Expr q_idx, kv_idx;  // the placeholders' expressions, where a table is read
};

// A score modifier's value at score `score` (of the pair (k, q) of head h, batch entry b, the query at its
// position), float32, with its distance and key terms as tables.
template <class Expr>
Halide::Expr lower_modifier(const Expr& modifier, const Halide::Expr& score, const Halide::Var& q, const Halide::Var& k,
                            const Halide::Var& h, const Halide::Var& b, const QueryPositions& positions,
                            LoweringContext& ctx) {
    const Halide::Expr position = positions.position(q, b);
    const DistanceTables tables{q.name(), k.name(), [&](const Halide::Expr& bb) { return positions.offset(bb); },
                                h, b, &ctx};
    const HoistingBackend backend{HalideBackend{&ctx.inputs}, &tables, position, k};
    struct Env {
        TrackedExpr score, b, h, q_idx, kv_idx;
    };
    const Env env{{score, TrackedExpr::score}, {b}, {h}, {position, TrackedExpr::query}, {k, TrackedExpr::key}};
    Halide::Expr modified = dsl::ex::evaluate(modifier, env, backend).e;
    return modified.type().is_float() ? modified : Halide::cast<float>(modified);
}

}  // namespace attnforge::codegen
