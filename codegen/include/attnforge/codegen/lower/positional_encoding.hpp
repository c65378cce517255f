// positional_encoding: x + the sinusoidal table of Vaswani et al., the table computed once per call.
#pragma once

#include <attnforge/codegen/lower/node.hpp>

#include <cmath>

namespace attnforge::codegen {

template <class X>
Lowered Lower::impl(const dsl::positional_encoding_node<X>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx);
    constexpr int D = X::kind::width;
    const std::string name = ctx.name("positional_encoding");
    Halide::Var d("d"), l("l"), b("b");
    // The table is computed in float64: at positions of 10^4 a float32 angle is already off by ~1e-3.
    Halide::Func table(name + "_table"), f(name);
    const Halide::Expr pair_start = Halide::cast<double>(d - d % 2);
    const Halide::Expr angle =
        Halide::cast<double>(l) *
        Halide::exp(pair_start * Halide::Internal::make_const(Halide::Float(64), -std::log(10000.0) / D));
    table(d, l) = Halide::cast<float>(Halide::select(d % 2 == 0, Halide::sin(angle), Halide::cos(angle)));
    f(d, l, b) = x.func(d, l, b) + table(d, l);
    ctx.roles.tables.push_back(table);
    return {f, x.extents};
}

}  // namespace attnforge::codegen
