// linear: y(o, l, b) = Σ_i x(i, l, b) · w(o, i) (+ bias(o)). The reduction is its own Func so that a
// schedule can compute it register-blocked inside tiles of the output. Rows are read clamped to
// [0, L): a schedule may round row tiles up (whole register tiles, no tail branches) without reading
// outside x; the extra rows are never consumed.
// Under Tiles::bf16_products (a bf16 kernel on a target with bf16 products) the projection's computed operands
// are rounded to bf16 (docs/contract.md §5 allows it, with its term for the rounding): a computed x (a
// LayerNorm's output, the attention heads an output projection reads) where it is staged for x · W over pairs,
// and y itself where a product reads it (Lowered::stored: Q, K and V, whose Q·Kᵀ and P·V then run over pairs
// or on AMX tiles as an input's do).
#pragma once

#include <attnforge/codegen/lower/amx_tiles.hpp>
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
    bool pairs = false, amx = false;
    // x · W over pairs of bf16 along i (lower/bf16_pairs.hpp) where W is the kernel's own bf16 input: exact
    // products of the bf16 operands. x staged in bf16 once per call, (i, l, b), rows read clamped to [0, L) there
    // (a tile's rows then stay affine, as AMX's matcher needs): as stored where it is an input, rounded where it
    // is computed. W packed as (pair, o, i/2): a vector of columns with each pair of rows adjacent, which is also
    // AMX's layout of a right operand. On AMX (Tiles::amx_products, i whole tile steps of 32, 16-column tiles of
    // the output) the product is a tile product (lower/amx_tiles.hpp), else vdpbf16ps register tiles.
    auto pair_weights = [&] {
        Halide::Var pair("pair"), i2("i2");
        Halide::Func weights(name + "_weight_pairs");
        weights(pair, o, i2) = w.stored({column, 2 * i2 + pair});  // W's bf16 as stored: a copy, no arithmetic
        ctx.roles.bf16_weight_pairs.push_back(weights);
        return weights;
    };
    // Float32 products over a 16-bit W or x input (no pairs: fp16, or bf16 where vdpbf16ps does not pay) read them
    // converted once per call, not at every register tile's read (two more instructions on the FMA ports a
    // vector): W as (o, i), x's rows as (i, l, b), staged once for the projections of one x (Q, K and V).
    auto sixteen_bit = [](const Lowered& in) {
        return in.parameter.defined() && (in.parameter.type() == Halide::BFloat(16) ||
                                          in.parameter.type() == Halide::Float(16));
    };
    auto weight = [&](const Halide::Expr& i) -> Halide::Expr {
        if (!sixteen_bit(w)) return w.func(column, i);
        Halide::Func converted(name + "_weights_f32");  // one per projection: weight() is called once
        converted(o, l) = w.func(column, l);              // (o, i), i in l's place
        ctx.roles.float32_weights.push_back(converted);
        return converted(o, i);
    };
    auto on_amx = [&](int Din) {
        return ctx.tiles().amx_products && detail::amx_fits(Din) && Dout % detail::amx_columns == 0;
    };
    if constexpr (detail::is_merge_heads<X>::value) {
        // Over merged heads (the output projection of multi-head attention) the reduction runs over
        // (e, h) of the per-head layout, i = h·E + e, e innermost: each step's address is then linear in
        // the loop variables (through merge_heads it paid an i / E and an i % E).
        using Heads = std::remove_cvref_t<decltype(std::declval<X>().x)>;
        constexpr int E = Heads::kind::head_width, H = Heads::kind::heads;
        const Lowered heads = node(n.x.x, ctx);
        x = {heads.func, {Halide::Expr(H * E), heads.extents[1], heads.extents[3]}};
        const Halide::Expr row = Halide::clamp(l, 0, heads.extents[1] - 1);
        if (ctx.tiles().bf16_products && E % 2 == 0 && w.stored) {
            // The heads rounded to bf16 once per call, (e, h, l, b): a row of them is x's row, i = h·E + e.
            Halide::Var e("e"), h("h");
            Halide::Func rows(name + "_heads_bf16");
            rows(e, h, l, b) = detail::round_to_bf16(heads.func(e, row, h, b));
            ctx.roles.bf16_rows.push_back(rows);
            const Halide::Func weights = pair_weights();
            if (on_amx(E)) {
                // Tile steps of 32 values of one head: step s covers i = 32·s + (0..31), head s / (E/32).
                Halide::RDom r = detail::amx_reduction(H * E / detail::amx_depth, "i");
                constexpr int steps_per_head = E / detail::amx_depth;
                sum(o, l, b) += detail::pair_product(
                    rows(detail::amx_depth * (r.y % steps_per_head) + r.x, r.y / steps_per_head, l, b),
                    weights(r.x % 2, o, detail::amx_pair_index(r)));
                amx = true;
            } else {
                Halide::RDom r(0, 2, 0, E / 2, 0, H, "i");
                sum(o, l, b) +=
                    detail::pair_product(rows(2 * r.y + r.x, r.z, l, b), weights(r.x, o, r.z * (E / 2) + r.y));
            }
            pairs = true;
        } else {
            Halide::RDom r(0, E, 0, H, "i");
            sum(o, l, b) += heads.func(r.x, row, r.y, b) * weight(r.y * E + r.x);
        }
    } else {
        x = node(n.x, ctx);
        constexpr int Din = X::kind::width;
        const Halide::Expr row = Halide::clamp(l, 0, x.extents[1] - 1);
        if (ctx.tiles().bf16_products && Din % 2 == 0 && w.stored) {
            // Staged once for the projections of one x (Q, K and V).
            const std::string staged = x.func.name() + "_bf16";
            std::vector<Halide::Func>& staged_rows = ctx.roles.bf16_rows;
            auto found = std::find_if(staged_rows.begin(), staged_rows.end(),
                                      [&](const Halide::Func& f) { return f.name() == staged; });
            Halide::Var i("i");
            Halide::Func rows = found != staged_rows.end() ? *found : Halide::Func(staged);
            if (found == staged_rows.end()) {
                rows(i, l, b) = detail::round_to_bf16(x.func(i, row, b));
                staged_rows.push_back(rows);
            }
            const Halide::Func weights = pair_weights();
            if (on_amx(Din)) {
                Halide::RDom r = detail::amx_reduction(Din / detail::amx_depth, "i");
                sum(o, l, b) += detail::pair_product(rows(detail::amx_depth * r.y + r.x, l, b),
                                                     weights(r.x % 2, o, detail::amx_pair_index(r)));
                amx = true;
            } else {
                Halide::RDom r = detail::pair_reduction(Din, "i");
                sum(o, l, b) += detail::pair_product(rows(2 * r.y + r.x, l, b), weights(r.x, o, r.y));
            }
            pairs = true;
        } else {
            Halide::RDom i(0, Din, "i");
            Halide::Func rows = x.func;
            if (sixteen_bit(x)) {
                const std::string staged = x.func.name() + "_f32";
                std::vector<Halide::Func>& staged_rows = ctx.roles.bf16_rows;
                auto found = std::find_if(staged_rows.begin(), staged_rows.end(),
                                          [&](const Halide::Func& f) { return f.name() == staged; });
                Halide::Var xi("i");
                rows = found != staged_rows.end() ? *found : Halide::Func(staged);
                if (found == staged_rows.end()) {
                    rows(xi, l, b) = x.func(xi, row, b);
                    staged_rows.push_back(rows);
                }
            }
            sum(o, l, b) += rows(i, sixteen_bit(x) ? Halide::Expr(l) : row, b) * weight(i);
        }
    }
    if constexpr (dsl::linear_node<X, W, Bias>::has_bias) {
        const Lowered bias = node(n.bias, ctx);
        y(o, l, b) = sum(o, l, b) + bias.func(column);  // clamped as the weight read: tiles may round up
    } else {
        y(o, l, b) = sum(o, l, b);
    }
    ctx.roles.projections.push_back({y, sum, x.func.name(), Dout, pairs, amx});
    Lowered result{y, {Halide::Expr(W::kind::out_width), x.extents[1], x.extents[2]}};
    if (ctx.tiles().bf16_products)
        result.stored = [y](const std::vector<Halide::Expr>& at) { return detail::round_to_bf16(y(at)); };
    return result;
}

}  // namespace attnforge::codegen
