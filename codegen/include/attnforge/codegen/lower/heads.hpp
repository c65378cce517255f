// split_heads / merge_heads: pure re-indexing (head h is columns [h·E, (h+1)·E)).
#pragma once

#include <attnforge/codegen/lower/node.hpp>

namespace attnforge::codegen {

template <class X, int H>
Lowered Lower::impl(const dsl::split_heads_node<X, H>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx);
    constexpr int E = X::kind::width / H;
    Halide::Var e("e"), l("l"), h("h"), b("b");
    Halide::Func f(ctx.name("split_heads"));
    f(e, l, h, b) = x.func(h * E + e, l, b);
    Lowered heads{f, {Halide::Expr(E), x.extents[1], Halide::Expr(H), x.extents[2]}};
    // A projection's heads, rounded to bf16 where a product reads them (lower/linear.hpp); not an input's (its stored
    // accessor reads the buffer as it is, which may have no batch index).
    if (x.stored && !x.parameter.defined())
        heads.stored = [stored = x.stored](const std::vector<Halide::Expr>& at) {
            return stored({at[2] * E + at[0], at[1], at[3]});
        };
    return heads;
}

template <class X>
Lowered Lower::impl(const dsl::merge_heads_node<X>& n, LoweringContext& ctx) {
    const Lowered x = node(n.x, ctx);
    constexpr int E = X::kind::head_width, H = X::kind::heads;
    Halide::Var d("d"), l("l"), b("b");
    Halide::Func f(ctx.name("merge_heads"));
    f(d, l, b) = x.func(d % E, l, d / E, b);
    return {f, {Halide::Expr(H * E), x.extents[1], x.extents[3]}};
}

}  // namespace attnforge::codegen
