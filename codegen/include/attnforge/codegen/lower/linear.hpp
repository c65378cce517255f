// linear: y(o, l, b) = Σ_i x(i, l, b) · w(o, i) (+ bias(o)). The reduction is its own Func so that a
// schedule can compute it register-blocked inside tiles of the output. Rows are read clamped to
// [0, L): a schedule may round row tiles up (whole register tiles, no tail branches) without reading
// outside x; the extra rows are never consumed.
#pragma once

#include <attnforge/codegen/lower/bf16_pairs.hpp>
#include <attnforge/codegen/lower/node.hpp>

#include <algorithm>
#include <type_traits>
#include <utility>

namespace attnforge::codegen {

namespace detail {
template <class X>
struct is_merge_heads : std::false_type {};
template <class Y>
struct is_merge_heads<dsl::merge_heads_node<Y>> : std::true_type {};
}  // namespace detail

template <class X, class W, class Bias>
Lowered Lower::impl(const dsl::linear_node<X, W, Bias>& n, LoweringContext& ctx) {
    const Lowered w = node(n.w, ctx);
    const std::string name = ctx.name("linear");
    Halide::Var o("o"), l("l"), b("b");
    Halide::Func sum(name + "_sum"), y(name);
    sum(o, l, b) = 0.0f;
    // Output columns too, where D_out is not a whole number of the plan's column tiles (attnforge tune
    // found tiles of 3 vectors reading past a width of 512 without this).
    constexpr int Dout = W::kind::out_width;
    const int tile_columns = ctx.tiles().projection_columns;
    const Halide::Expr column = Dout % tile_columns == 0 ? Halide::Expr(o) : Halide::clamp(o, 0, Dout - 1);
    Lowered x;
    bool pairs = false;
    if constexpr (detail::is_merge_heads<X>::value) {
        // Over merged heads (the output projection of multi-head attention) the reduction runs over
        // (e, h) of the per-head layout, i = h·E + e, e innermost: each step's address is then linear in
        // the loop variables (through merge_heads it paid an i / E and an i % E).
        using Heads = std::remove_cvref_t<decltype(std::declval<X>().x)>;
        constexpr int E = Heads::kind::head_width, H = Heads::kind::heads;
        const Lowered heads = node(n.x.x, ctx);
        x = {heads.func, {Halide::Expr(H * E), heads.extents[1], heads.extents[3]}};
        Halide::RDom r(0, E, 0, H, "i");
        sum(o, l, b) +=
            heads.func(r.x, Halide::clamp(l, 0, heads.extents[1] - 1), r.y, b) * w.func(column, r.y * E + r.x);
    } else {
        x = node(n.x, ctx);
        constexpr int Din = X::kind::width;
        if (ctx.tiles().bf16_products && Din % 2 == 0 && x.stored && w.stored) {
            // x and W are the kernel's own bf16 inputs: x · W over pairs of bf16 along i (lower/bf16_pairs.hpp),
            // exact products as float32 ones. x staged in bf16 once per call (shared by the projections of one
            // x), W packed as (pair, o, i/2): a vector of columns with each pair of rows adjacent.
            const std::string staged = x.func.name() + "_bf16";
            std::vector<Halide::Func>& staged_rows = ctx.roles.bf16_rows;
            auto found = std::find_if(staged_rows.begin(), staged_rows.end(),
                                      [&](const Halide::Func& f) { return f.name() == staged; });
            Halide::Var i("i"), pair("pair"), i2("i2");
            Halide::Func rows = found != staged_rows.end() ? *found : Halide::Func(staged);
            if (found == staged_rows.end()) {
                rows(i, l, b) = detail::round_to_bf16(x.func(i, l, b));
                staged_rows.push_back(rows);
            }
            Halide::Func weights(name + "_weight_pairs");
            weights(pair, o, i2) = detail::round_to_bf16(w.func(column, 2 * i2 + pair));
            ctx.roles.bf16_weight_pairs.push_back(weights);
            Halide::RDom r = detail::pair_reduction(Din, "i");
            sum(o, l, b) += detail::pair_product(rows(2 * r.y + r.x, Halide::clamp(l, 0, x.extents[1] - 1), b),
                                                 weights(r.x, o, r.y));
            pairs = true;
        } else {
            Halide::RDom i(0, Din, "i");
            sum(o, l, b) += x.func(i, Halide::clamp(l, 0, x.extents[1] - 1), b) * w.func(column, i);
        }
    }
    if constexpr (dsl::linear_node<X, W, Bias>::has_bias) {
        const Lowered bias = node(n.bias, ctx);
        y(o, l, b) = sum(o, l, b) + bias.func(column);  // clamped as the weight read: tiles may round up
    } else {
        y(o, l, b) = sum(o, l, b);
    }
    ctx.roles.projections.push_back({y, sum, x.func.name(), Dout, pairs});
    return {y, {Halide::Expr(W::kind::out_width), x.extents[1], x.extents[2]}};
}

}  // namespace attnforge::codegen
