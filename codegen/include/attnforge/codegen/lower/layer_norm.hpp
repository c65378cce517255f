// layer_norm: (x − mean) / sqrt(var + eps) · gamma + beta over the last axis (biased variance), a row
// operation with its mean and variance as per-row statistics.
#pragma once

#include <attnforge/codegen/lower/node.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>

namespace attnforge::codegen {

template <class X, class G, class Bt>
Lowered Lower::impl(const dsl::layer_norm_node<X, G, Bt>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx), gamma = node(n.gamma, ctx), beta = node(n.beta, ctx);
    constexpr int D = X::kind::width;
    const std::string name = ctx.name("layer_norm");
    Halide::Var d("d"), l("l"), b("b");
    // Two passes (the mean, then the biased variance of the centred values), as the interpreter does, each split
    // by lanes (lower/row_reduction.hpp): a scalar sum over the row was a chain of D dependent adds, twice a row
    // (13 % of bf16 self_attention_layer at L = 512, Emerald Rapids).
    const int lanes = ctx.tiles().lanes;
    auto row_sum = [&](const std::string& what, const Halide::Func& values) {
        return detail::reduce_by_lanes(name + what, detail::lane_sum(), values, Halide::Expr(D), {l, b}, l, KeyBand{},
                                       1, lanes);
    };
    // The lanes' last vector past D (D not a multiple of them) is the identity, read clamped.
    Halide::Func row(name + "_row");
    row(d, l, b) = x.func(D % lanes == 0 ? Halide::Expr(d) : Halide::clamp(d, 0, D - 1), l, b);
    const auto [total, total_lanes] = row_sum("_total", row);
    Halide::Func mean(name + "_mean"), centred(name + "_centred_squares"), var(name + "_var"), y(name);
    mean(l, b) = total(l, b) / D;
    centred(d, l, b) = Halide::pow(row(d, l, b) - mean(l, b), 2);
    const auto [squares, squares_lanes] = row_sum("_squares", centred);
    var(l, b) = squares(l, b) / D;
    y(d, l, b) = (x.func(d, l, b) - mean(l, b)) / Halide::sqrt(var(l, b) + static_cast<float>(n.eps)) * gamma.func(d) +
                 beta.func(d);
    ctx.roles.row_operations.push_back({y, {mean, var}, {{total, total_lanes}, {squares, squares_lanes}}});
    return {y, x.extents};
}

}  // namespace attnforge::codegen
