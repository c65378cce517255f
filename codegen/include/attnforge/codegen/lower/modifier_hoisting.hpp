// Score modifiers with their relative-position terms hoisted out of the score loop. A term of a modifier that
// depends on the query and the key only through their distance q_idx − kv_idx (and on h, b) — a T5 bucket and
// its bias, ALiBi's slope times |q_idx − kv_idx|, a clipped relative bias — is one value per distance: it becomes
// a table (d, h, b) computed once per call (Roles::distance_tables), read at d = q_idx − kv_idx. Along a vector of
// consecutive keys that index falls by one per lane, so the read is a vector load (reversed) where the term was
// a gather from its input and a float64 computation of the index per score.
#pragma once

#include <attnforge/codegen/lower/expressions.hpp>

namespace attnforge::codegen {

// A value of the modifier's expression and what it depends on.
struct TrackedExpr {
    enum : unsigned { score = 1, query = 2, key = 4, distance = 8 };
    Halide::Expr e;
    unsigned uses = 0;   // of the bits above; h and b are free (a table is indexed by them)
    int operations = 0;  // in its subtree: a bare distance is not worth a table
    bool is_query = false, is_key = false;  // the placeholder itself
};

// What makes the tables: the Vars the placeholders are written with, and where the tables go.
struct DistanceTables {
    std::string query_var, key_var;                     // q and k of the scores (k, q, h, b)
    std::function<Halide::Expr(const Halide::Expr& b)> query_offset;  // q_idx = q + query_offset(b)
    Halide::Var h, b;
    Roles* roles;
    LoweringContext* ctx;

    // term(q_idx, kv_idx, h, b) as a table of the distance, read at q_idx − kv_idx.
    Halide::Expr hoist(const Halide::Expr& term, const Halide::Expr& q_idx, const Halide::Expr& kv_idx) const {
        using Halide::Internal::substitute;
        Halide::Var d("d");
        Halide::Func table(ctx->name("distance_table"));
        table(d, h, b) = substitute(key_var, Halide::Expr(0), substitute(query_var, d - query_offset(b), term));
        roles->distance_tables.push_back(table);
        return table(q_idx - kv_idx, h, b);
    }
};

struct HoistingBackend {
    HalideBackend inner;
    const DistanceTables* tables;

    HoistingBackend indices() const { return {inner.indices(), tables}; }

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
            if ((x[0].is_query && x[1].is_key) || (x[0].is_key && x[1].is_query)) uses = TrackedExpr::distance;
        }
        // Where this operation mixes a distance term with the score, the query or the key, each operand that is a
        // term of the distance alone (more than the distance itself) becomes a table.
        const bool mixes = (uses & TrackedExpr::score) ||
                           ((uses & TrackedExpr::distance) && (uses & (TrackedExpr::query | TrackedExpr::key)));
        auto operand = [&](const TrackedExpr& x) {
            return mixes && x.uses == TrackedExpr::distance && x.operations > 1 ? tables->hoist(x.e, q_idx, kv_idx)
                                                                                : x.e;
        };
        return {inner.call(op, operand(a)...), uses, (a.operations + ... + 1)};
    }

    Halide::Expr q_idx, kv_idx;  // the placeholders' expressions, where a table is read
};

}  // namespace attnforge::codegen
