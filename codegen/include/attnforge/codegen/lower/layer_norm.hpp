// layer_norm: (x − mean) / sqrt(var + eps) · gamma + beta over the last axis (biased variance), a row
// operation with its mean and variance as per-row statistics.
#pragma once

#include <attnforge/codegen/lower/node.hpp>

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
    y(d, l, b) = (x.func(d, l, b) - mean(l, b)) / Halide::sqrt(var(l, b) + static_cast<float>(n.eps)) * gamma.func(d) +
                 beta.func(d);
    ctx.roles.row_operations.push_back({y, {mean, var}});
    return {y, x.extents};
}

}  // namespace attnforge::codegen
