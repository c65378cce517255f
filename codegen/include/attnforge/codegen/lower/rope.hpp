// rope: rotary position embedding of per-head activations, pairs (i, i + E/2) rotated by pos·θ_i.
#pragma once

#include <attnforge/codegen/lower.hpp>

namespace attnforge::codegen {

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
        Halide::cast<double>(l) *
        Halide::pow(Halide::Internal::make_const(Halide::Float(64), n.base),
                    Halide::cast<double>(i) * Halide::Internal::make_const(Halide::Float(64), -2.0 / E));
    cos_table(i, l) = Halide::cast<float>(Halide::cos(angle));
    sin_table(i, l) = Halide::cast<float>(Halide::sin(angle));
    const Halide::Expr pair = e % half, first = e < half;
    // (e + E/2) mod E is the partner either way, and bounds inference sees it stays in [0, E).
    const Halide::Expr partner = x.func((e + half) % E, l, h, b);
    f(e, l, h, b) =
        x.func(e, l, h, b) * cos_table(pair, l) + Halide::select(first, -partner, partner) * sin_table(pair, l);
    ctx.roles.tables.push_back(cos_table);
    ctx.roles.tables.push_back(sin_table);
    ctx.roles.elementwise.push_back(f);
    return {f, x.extents, true};
}

}  // namespace attnforge::codegen
