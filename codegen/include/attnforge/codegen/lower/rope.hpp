// rope: rotary position embedding of per-head activations, pairs (i, i + E/2) rotated by pos·θ_i, at
// the sequence index or at the positions in a cache (rope_in_cache).
#pragma once

#include <attnforge/codegen/lower/node.hpp>

namespace attnforge::codegen {

template <class X, class P>
Lowered Lower::impl(const dsl::rope_node<X, P>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx);
    constexpr int E = X::kind::head_width, half = E / 2;
    const std::string name = ctx.name("rope");
    Halide::Var i("i"), e("e"), l("l"), h("h"), b("b");
    // cos and sin of pos·θ_i in float64 (float32 angles at positions of 10^4 are off by ~1e-3), in two
    // tables (i, l) computed once per call — (i, l, b) where positions depend on the batch entry's cache
    // length (rope_in_cache); the rotated tensor itself once per call too (a role of its own), so that
    // the score product reads plain rows instead of rotating them once per key tile.
    constexpr bool cached = dsl::rope_node<X, P>::at_cache_positions;
    Halide::Expr position = l;
    if constexpr (cached) position = l + node(n.lengths, ctx).func(b) - x.extents[1];
    std::vector<Halide::Var> at{i, l};
    if (cached) at.push_back(b);
    Halide::Func cos_table(name + "_cos"), sin_table(name + "_sin"), f(name);
    const Halide::Expr angle =
        Halide::cast<double>(position) *
        Halide::pow(Halide::Internal::make_const(Halide::Float(64), n.base),
                    Halide::cast<double>(i) * Halide::Internal::make_const(Halide::Float(64), -2.0 / E));
    cos_table(at) = Halide::cast<float>(Halide::cos(angle));
    sin_table(at) = Halide::cast<float>(Halide::sin(angle));
    const Halide::Expr pair = e % half, first = e < half;
    auto table = [&](Halide::Func t) { return cached ? t(pair, l, b) : t(pair, l); };
    // (e + E/2) mod E is the partner either way, and bounds inference sees it stays in [0, E).
    const Halide::Expr partner = x.func((e + half) % E, l, h, b);
    f(e, l, h, b) = x.func(e, l, h, b) * table(cos_table) + Halide::select(first, -partner, partner) * table(sin_table);
    ctx.roles.tables.push_back(cos_table);
    ctx.roles.tables.push_back(sin_table);
    ctx.roles.elementwise.push_back(f);
    return {f, x.extents, true};
}

}  // namespace attnforge::codegen
