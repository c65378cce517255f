// dequantize: a quantized cache's values (dsl/nodes/dequantize.hpp), (float(u) − zero) · scale per (b, h, token),
// an expression over the codes read in place: never a dequantized copy. Attentions read it through its rows
// (Lower::rows for quantized_rows, lower/kv_source.hpp); this is the node's value elsewhere in a graph.
#pragma once

#include <attnforge/codegen/lower/node.hpp>

namespace attnforge::codegen {

namespace detail {
// The value at (e, l, h, b) of codes dequantized by their token's scale and zero point.
inline Halide::Expr dequantized(const Lowered& codes, const Lowered& scale, const Lowered& zero, const Halide::Expr& e,
                                const Halide::Expr& l, const Halide::Expr& h, const Halide::Expr& b) {
    return (Halide::cast<float>(codes.func(e, l, h, b)) - zero.func(l, h, b)) * scale.func(l, h, b);
}
}  // namespace detail

template <class C, class S, class Z>
Lowered Lower::impl(const dsl::dequantize_node<C, S, Z>& n, LoweringContext& ctx) {
    const Lowered codes = node(n.codes, ctx), scale = node(n.scale, ctx), zero = node(n.zero, ctx);
    Halide::Var e("e"), l("l"), h("h"), b("b");
    Halide::Func f(ctx.name("dequantize"));
    f(e, l, h, b) = detail::dequantized(codes, scale, zero, e, l, h, b);
    Lowered out{f, codes.extents, true};
    out.parameter = codes.parameter;
    return out;
}

// Quantized rows: each K or V element converted where a product reads it, from the codes' own buffer (one byte an
// element streamed, the scale and zero point once a row); the codes' buffer is what a prefetch of rows names.
template <class C, class S, class Z>
KeyValueSource Lower::rows(const dsl::quantized_rows<C, S, Z>& rows, LoweringContext& ctx) {
    const Lowered codes = node(rows.node.codes, ctx), scale = node(rows.node.scale, ctx),
                  zero = node(rows.node.zero, ctx);
    KeyValueSource source;
    source.element = [codes, scale, zero](const Halide::Expr& e, const Halide::Expr& key, const Halide::Expr& h,
                                          const Halide::Expr& b) {
        return detail::dequantized(codes, scale, zero, e, key, h, b);
    };
    // The scale folded out of the products that can (the decode strategy's): (float(u) − zero) per element, the
    // token's scale once per key score and once per value row's weight. The zero point stays per element: folded
    // out as well (Σ q·u − zero·Σ q) the sum would cancel terms up to 255·scale, error of order 2⁻²⁴·255·scale·Σ|q|
    // against §5's 2⁻²⁴·Σ|q·k| (about 4× it on uniform codes).
    source.unscaled = [codes, zero](const Halide::Expr& e, const Halide::Expr& key, const Halide::Expr& h,
                                    const Halide::Expr& b) {
        return Halide::cast<float>(codes.func(e, key, h, b)) - zero.func(key, h, b);
    };
    source.row_scale = [scale](const Halide::Expr& key, const Halide::Expr& h, const Halide::Expr& b) {
        return scale.func(key, h, b);
    };
    source.extents = codes.extents;
    source.dense_rows = true;
    source.row_buffer = codes.parameter;
    return source;
}

}  // namespace attnforge::codegen
