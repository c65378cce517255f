// add: the residual sum of two tensors of one kind; no role of its own (inlined into its reader).
#pragma once

#include <attnforge/codegen/lower/node.hpp>

namespace attnforge::codegen {

template <class A, class B>
Lowered Lower::impl(const dsl::add_node<A, B>& n, LoweringContext& ctx) {
    const Lowered a = node(n.a, ctx), c = node(n.b, ctx);
    Halide::Var d("d"), l("l"), b("b");
    Halide::Func f(ctx.name("add"));
    f(d, l, b) = a.func(d, l, b) + c.func(d, l, b);
    return {f, a.extents};
}

}  // namespace attnforge::codegen
