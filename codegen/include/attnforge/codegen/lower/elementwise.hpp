// layer_norm, add, positional_encoding, rope.
#pragma once

#include <attnforge/codegen/lower.hpp>

#include <cmath>

namespace attnforge::codegen {

template <class X, class G, class Bt>
Lowered Lower::impl(const dsl::layer_norm_node<X, G, Bt>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx), gamma = node(n.gamma, ctx), beta = node(n.beta, ctx);
    constexpr int D = X::kind::width;
    const std::string name = ctx.name("layer_norm");
    Halide::Var d("d"), l("l"), b("b");
    Halide::RDom r(0, D, "r");
    Halide::Func mean(name + "_mean"), var(name + "_var"), y(name);
    // Two passes (mean, then the biased variance of the centred values), as the interpreter does.
    mean(l, b) = 0.0f;
    mean(l, b) += x.func(r, l, b);
    mean(l, b) = mean(l, b) / D;
    var(l, b) = 0.0f;
    var(l, b) += Halide::pow(x.func(r, l, b) - mean(l, b), 2);
    var(l, b) = var(l, b) / D;
    y(d, l, b) = (x.func(d, l, b) - mean(l, b)) / Halide::sqrt(var(l, b) + static_cast<float>(n.eps)) *
                     gamma.func(d) + beta.func(d);
    ctx.roles.row_operations.push_back({y, {mean, var}});
    return {y, x.extents};
}

template <class A, class B>
Lowered Lower::impl(const dsl::add_node<A, B>& n, LoweringContext& ctx) {
    const Lowered a = node(n.a, ctx), c = node(n.b, ctx);
    Halide::Var d("d"), l("l"), b("b");
    Halide::Func f(ctx.name("add"));
    f(d, l, b) = a.func(d, l, b) + c.func(d, l, b);
    return {f, a.extents};
}

template <class X>
Lowered Lower::impl(const dsl::positional_encoding_node<X>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx);
    constexpr int D = X::kind::width;
    const std::string name = ctx.name("positional_encoding");
    Halide::Var d("d"), l("l"), b("b");
    // The table is computed in float64: at positions of 10^4 a float32 angle is already off by ~1e-3.
    Halide::Func table(name + "_table"), f(name);
    const Halide::Expr pair_start = Halide::cast<double>(d - d % 2);
    const Halide::Expr angle = Halide::cast<double>(l) * Halide::exp(pair_start * Halide::Internal::make_const(Halide::Float(64), -std::log(10000.0) / D));
    table(d, l) = Halide::cast<float>(Halide::select(d % 2 == 0, Halide::sin(angle), Halide::cos(angle)));
    f(d, l, b) = x.func(d, l, b) + table(d, l);
    ctx.roles.tables.push_back(table);
    return {f, x.extents};
}

template <class X>
Lowered Lower::impl(const dsl::rope_node<X>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx);
    constexpr int E = X::kind::head_width, half = E / 2;
    const std::string name = ctx.name("rope");
    Halide::Var i("i"), e("e"), l("l"), h("h"), b("b");
    // cos and sin of pos·θ_i in float64 (float32 angles at positions of 10^4 are off by ~1e-3), in two
    // tables (i, l) computed once per call; the rotated tensor itself once per call too (a role of its
    // own), so that the score product reads plain rows instead of rotating them once per key tile.
    Halide::Func cos_table(name + "_cos"), sin_table(name + "_sin"), f(name);
    const Halide::Expr angle =
        Halide::cast<double>(l) * Halide::pow(Halide::Internal::make_const(Halide::Float(64), n.base),
                                              Halide::cast<double>(i) * Halide::Internal::make_const(Halide::Float(64), -2.0 / E));
    cos_table(i, l) = Halide::cast<float>(Halide::cos(angle));
    sin_table(i, l) = Halide::cast<float>(Halide::sin(angle));
    const Halide::Expr pair = e % half, first = e < half;
    // (e + E/2) mod E is the partner either way, and bounds inference sees it stays in [0, E).
    const Halide::Expr partner = x.func((e + half) % E, l, h, b);
    f(e, l, h, b) = x.func(e, l, h, b) * cos_table(pair, l) +
                    Halide::select(first, -partner, partner) * sin_table(pair, l);
    ctx.roles.tables.push_back(cos_table);
    ctx.roles.tables.push_back(sin_table);
    ctx.roles.elementwise.push_back(f);
    return {f, x.extents, true};
}

}  // namespace attnforge::codegen
