// mask and modify: masked scores are -inf and stay -inf through any modifier (CONTRACT §1, README).
#pragma once

#include <attnforge/codegen/halide_backend.hpp>
#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower.hpp>

#include <limits>

namespace attnforge::codegen {

inline Halide::Expr minus_infinity() { return Halide::Expr(-std::numeric_limits<float>::infinity()); }

template <class S, class Spec>
Lowered Lower::impl(const dsl::mask_node<S, Spec>& n, LoweringContext& ctx) {
    const Lowered s = node(n.scores, ctx);
    Halide::Var k("k"), q("q"), h("h"), b("b");
    Halide::Expr keep;
    if constexpr (std::is_same_v<Spec, dsl::causal_mask>) {
        keep = k <= q;  // top-left aligned
    } else if constexpr (requires { n.spec.expr; }) {
        keep = dsl::ex::evaluate(n.spec.expr, HalideEnv{Halide::Expr(), b, h, q, k}, HalideBackend{&ctx.inputs});
    } else {
        // Mask inputs are read clamped to their extents, so that schedules may round score tiles up.
        const Lowered m = node(n.spec.mask, ctx);
        const Halide::Expr kc = Halide::clamp(k, 0, m.extents[0] - 1);
        if constexpr (std::is_same_v<Spec, dsl::key_padding_spec<decltype(n.spec.mask)>>)
            keep = m.func(kc, b) == 0;  // true = padded
        else
            keep = m.func(kc, Halide::clamp(q, 0, m.extents[1] - 1), b) != 0;
    }
    Halide::Func f(ctx.name("mask"));
    f(k, q, h, b) = ieee(Halide::select(keep, s.func(k, q, h, b), minus_infinity()));
    // Bands (causal, sliding window) are skipped by loop bounds known when generating; any other mask
    // can be skipped by block ranges computed at run time (AttentionCore::keeps).
    constexpr bool band = std::is_same_v<Spec, dsl::causal_mask> || requires { n.spec.window; };
    if constexpr (!band) {
        Halide::Func kept(ctx.name("mask_keep"));
        kept(k, q, h, b) = keep;
        ctx.pending_keeps.push_back(kept);
        if constexpr (requires { n.spec.expr; })
            ctx.pending_keeps_use_heads |= dsl::ex::checks<decltype(n.spec.expr)>::template uses<dsl::ex::var_id::h>;
    }
    return {f, s.extents};
}

template <class S, class E>
Lowered Lower::impl(const dsl::modify_node<S, E>& n, LoweringContext& ctx) {
    const Lowered s = node(n.scores, ctx);
    Halide::Var k("k"), q("q"), h("h"), b("b");
    const Halide::Expr score = s.func(k, q, h, b);
    Halide::Expr modified = dsl::ex::evaluate(n.expr, HalideEnv{score, b, h, q, k}, HalideBackend{&ctx.inputs});
    if (!modified.type().is_float()) modified = Halide::cast<float>(modified);
    Halide::Func f(ctx.name("modify"));
    f(k, q, h, b) = ieee(Halide::select(score == minus_infinity(), score, modified));
    return {f, s.extents};
}

}  // namespace attnforge::codegen
