// dequantize: a quantized cache's values (dsl/nodes/dequantize.hpp), an expression over the codes read in place:
// never a dequantized copy. (float(u) − zero) · scale per (b, h, token) or per (b, h, block of T tokens, channel),
// or symmetric float(c) · scale, the scale per token or per group of G channels. Attentions read it through its rows
// (Lower::rows for quantized_rows, lower/kv_source.hpp); this is the node's value elsewhere in a graph.
#pragma once

#include <attnforge/codegen/lower/node.hpp>

#include <optional>

namespace attnforge::codegen {

namespace detail {
// A quantized cache lowered: its codes, scales and zero points (caches with one), the group size G of its scales
// (0: one a token) and the block of T tokens whose channels share a scale and zero point (0: none, by token).
struct QuantizedCache {
    Lowered codes, scale;
    std::optional<Lowered> zero;
    int group = 0;
    int token_block = 0;

    // The codes at (e, l, h, b) without their scale: float(u) − zero, or float(c).
    Halide::Expr unscaled(const Halide::Expr& e, const Halide::Expr& l, const Halide::Expr& h,
                          const Halide::Expr& b) const {
        const Halide::Expr c = Halide::cast<float>(codes.func(e, l, h, b));
        if (!zero) return c;
        return token_block ? c - zero->func(e, l / token_block, h, b) : c - zero->func(l, h, b);
    }
    // The scale of the code at (e, l, h, b).
    Halide::Expr scale_of(const Halide::Expr& e, const Halide::Expr& l, const Halide::Expr& h,
                          const Halide::Expr& b) const {
        if (token_block) return scale.func(e, l / token_block, h, b);
        return group ? scale.func(e / group, l, h, b) : scale.func(l, h, b);
    }
    Halide::Expr value(const Halide::Expr& e, const Halide::Expr& l, const Halide::Expr& h,
                       const Halide::Expr& b) const {
        return unscaled(e, l, h, b) * scale_of(e, l, h, b);
    }
};

template <class C, class S, class Z>
QuantizedCache lower_quantized(const dsl::dequantize_node<C, S, Z>& n, LoweringContext& ctx) {
    using Node = dsl::dequantize_node<C, S, Z>;
    QuantizedCache cache{Lower::node(n.codes, ctx), Lower::node(n.scale, ctx), std::nullopt, Node::group,
                         Node::token_block};
    if constexpr (!Node::symmetric) cache.zero = Lower::node(n.zero, ctx);
    return cache;
}
}  // namespace detail

template <class C, class S, class Z>
Lowered Lower::impl(const dsl::dequantize_node<C, S, Z>& n, LoweringContext& ctx) {
    const detail::QuantizedCache cache = detail::lower_quantized(n, ctx);
    Halide::Var e("e"), l("l"), h("h"), b("b");
    Halide::Func f(ctx.name("dequantize"));
    f(e, l, h, b) = cache.value(e, l, h, b);
    Lowered out{f, cache.codes.extents, true};
    out.parameter = cache.codes.parameter;
    return out;
}

// Quantized rows: each K or V element converted where a product reads it, from the codes' own buffer (one byte an
// element streamed, the scales and zero point once a row or group); the codes' buffer is what a prefetch of rows
// names.
template <class C, class S, class Z>
KeyValueSource Lower::rows(const dsl::quantized_rows<C, S, Z>& rows, LoweringContext& ctx) {
    const detail::QuantizedCache cache = detail::lower_quantized(rows.node, ctx);
    KeyValueSource source;
    source.element = [cache](const Halide::Expr& e, const Halide::Expr& key, const Halide::Expr& h,
                             const Halide::Expr& b) { return cache.value(e, key, h, b); };
    // A scale per token is folded out of the products that can (the decode strategy's): the codes (less the zero
    // point) per element, the token's scale once per key score and once per value row's weight. The zero point
    // stays per element: folded out as well (Σ q·u − zero·Σ q) the sum would cancel terms up to 255·scale, error of
    // order 2⁻²⁴·255·scale·Σ|q| against §5's 2⁻²⁴·Σ|q·k| (about 4× it on uniform codes). Scales per group of
    // channels stay per element (a product per group would need a partial sum per group). Scales per channel of a
    // block of keys are folded into the queries once per block where the product can (the decode strategy's), the
    // zero point per element as here.
    if (!cache.group)
        source.unscaled = [cache](const Halide::Expr& e, const Halide::Expr& key, const Halide::Expr& h,
                                  const Halide::Expr& b) { return cache.unscaled(e, key, h, b); };
    if (cache.token_block) {
        source.channel_scale = [cache](const Halide::Expr& e, const Halide::Expr& key, const Halide::Expr& h,
                                       const Halide::Expr& b) { return cache.scale_of(e, key, h, b); };
        source.channel_block = cache.token_block;
    } else if (!cache.group) {
        source.row_scale = [scale = cache.scale](const Halide::Expr& key, const Halide::Expr& h,
                                                 const Halide::Expr& b) { return scale.func(key, h, b); };
        // The codes for integer dot products: uint8 as stored, int8 c as the uint8 c + 128 (its bits with the top
        // one flipped) less a zero point of 128.
        source.unsigned_codes = [codes = cache.codes.func](const Halide::Expr& e, const Halide::Expr& key,
                                                           const Halide::Expr& h, const Halide::Expr& b) {
            const Halide::Expr c = codes(e, key, h, b);
            if (c.type() == Halide::UInt(8)) return c;
            return Halide::reinterpret(Halide::UInt(8), c) ^ Halide::cast<uint8_t>(0x80);
        };
        source.code_zero = [zero = cache.zero](const Halide::Expr& key, const Halide::Expr& h, const Halide::Expr& b) {
            return zero ? zero->func(key, h, b) : Halide::Expr(128.0f);
        };
    }
    source.extents = cache.codes.extents;
    source.dense_rows = true;
    source.row_buffer = cache.codes.parameter;
    return source;
}

}  // namespace attnforge::codegen
