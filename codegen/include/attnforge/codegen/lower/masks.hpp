// The layers of an attention pattern between its score product and its softmax (docs/contract.md §1):
// a mask makes the scores of the pairs it removes −∞, and −∞ stays −∞ through any later modifier.
// apply_layer lowers one layer over the scores below it, with the queries at their positions (q_idx of
// predicates and modifiers, causal's diagonal: QueryPositions); a mask known only at run time also adds
// its keep(k, q, h, b) to the pattern's RunTimeKeeps (the block-mask pre-pass reads them).
#pragma once

#include <attnforge/codegen/lower/expression_bounds.hpp>
#include <attnforge/codegen/lower/expressions.hpp>
#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/modifier_hoisting.hpp>
#include <attnforge/codegen/lower/node.hpp>

namespace attnforge::codegen::detail {

// Whether a predicate's bounds can skip blocks (find dead ones) and fill them (find full ones). On the host the
// analysis knows no input; a predicate that reads one at indices of b and h alone (a prefix length, a window
// per head) may do both once the kernel reads it, so it is given both tests.
template <class Expr>
bool predicate_skips_blocks(const Expr& expr) {
    return dsl::ex::checks<Expr>::reads_at_points || dsl::ex::finds_dead_blocks(expr);
}
template <class Expr>
bool predicate_fills_blocks(const Expr& expr) {
    return dsl::ex::checks<Expr>::reads_at_points || dsl::ex::finds_full_blocks(expr);
}

// Whether a layer is a predicate that fills blocks: the streaming strategy visits those blocks without
// evaluating it (CoreCommon::full_block_scores), and applies it after the other layers, which it commutes with
// (each layer acts on each score alone, and −∞ stays −∞ through a modifier).
template <class Layer>
bool fills_blocks(const Layer&) {
    return false;
}
template <class Spec>
bool fills_blocks(const dsl::mask_layer<Spec>& layer) {
    if constexpr (dsl::is_predicate_spec<Spec>)
        return predicate_fills_blocks(layer.spec.expr);
    else
        return false;
}

template <class Spec>
Lowered apply_layer(const dsl::mask_layer<Spec>& layer, const Lowered& s, RunTimeKeeps& run_time,
                    const QueryPositions& positions, LoweringContext& ctx) {
    Halide::Var k("k"), q("q"), h("h"), b("b");
    const Halide::Expr position = positions.position(q, b);
    Halide::Expr keep;
    Halide::Expr kept_score = s.func(k, q, h, b);
    if constexpr (dsl::is_a<Spec, dsl::causal_spec_tag>) {
        keep = k <= position;  // top-left aligned without a cache, bottom-right with one
    } else if constexpr (dsl::is_predicate_spec<Spec>) {
        keep = dsl::ex::evaluate(layer.spec.expr, HalideEnv{Halide::Expr(), b, h, position, k},
                                 HalideBackend{&ctx.inputs});
    } else if constexpr (dsl::is_a<Spec, dsl::kv_cache_spec_tag>) {
        keep = k < positions.lengths(b);  // the cache's empty slots; their key blocks are never visited
    } else {
        // Mask inputs are read clamped to their extents, so that schedules may round score tiles up.
        const Lowered m = Lower::node(layer.spec.mask, ctx);
        const Halide::Expr kc = Halide::clamp(k, 0, m.extents[0] - 1);
        const Halide::Expr qc = Halide::clamp(q, 0, m.extents[1] - 1);
        if constexpr (dsl::is_a<Spec, dsl::key_padding_spec_tag>) {
            keep = m.func(kc, b) == 0;  // true = padded
        } else if constexpr (dsl::is_broadcast_mask<typename decltype(layer.spec.mask)::kind>::value) {
            // PyTorch's attn_mask (B or 1, H or 1, Lq, Lk): a batch or head axis of extent 1 is read at 0.
            const Halide::Expr at =
                m.func(kc, qc, Halide::clamp(h, 0, m.extents[2] - 1), Halide::clamp(b, 0, m.extents[3] - 1));
            if constexpr (dsl::is_a<Spec, dsl::additive_mask_spec_tag>) {
                keep = ieee(at != minus_infinity());
                kept_score = kept_score + at;  // natural units: the pattern is not in base 2 (masks_only)
            } else {
                keep = at != 0;
            }
        } else {
            keep = m.func(kc, qc, b) != 0;
        }
    }
    Halide::Func f(ctx.name("mask"));
    f(k, q, h, b) = ieee(Halide::select(keep, kept_score, minus_infinity()));
    // Bands (causal, sliding window) are skipped by loop bounds known when generating; any other mask
    // can be skipped by block ranges computed at run time. Every predicate, a sliding window's too, is also
    // bounded over blocks of pairs from its expression (RunTimeKeeps::block_truths).
    Halide::Func kept;
    if constexpr (dsl::is_run_time_mask<Spec> || dsl::is_predicate_spec<Spec>) {
        kept = Halide::Func(ctx.name("mask_keep"));
        kept(k, q, h, b) = keep;
    }
    if constexpr (dsl::is_run_time_mask<Spec>) {
        run_time.keeps.push_back(kept);
        if constexpr (dsl::is_predicate_spec<Spec>)
            run_time.use_heads |= dsl::ex::checks<decltype(layer.spec.expr)>::template uses<dsl::ex::var_id::h>;
        else if constexpr (requires { dsl::is_broadcast_mask<typename decltype(layer.spec.mask)::kind>::value; })
            run_time.use_heads |= dsl::is_broadcast_mask<typename decltype(layer.spec.mask)::kind>::value;
    }
    if constexpr (dsl::is_predicate_spec<Spec>)
        run_time.block_truths.push_back(
            {[expr = layer.spec.expr, inputs = &ctx.inputs](const PairBlock& block) {
                 return block_truth(expr, block, *inputs);
             },
             predicate_skips_blocks(layer.spec.expr), fills_blocks(layer), kept});
    return {f, s.extents};
}

template <class Expr>
Lowered apply_layer(const dsl::modify_layer<Expr>& layer, const Lowered& s, RunTimeKeeps&,
                    const QueryPositions& positions, LoweringContext& ctx) {
    Halide::Var k("k"), q("q"), h("h"), b("b");
    const Halide::Expr score = s.func(k, q, h, b);
    const Halide::Expr modified = lower_modifier(layer.expr, score, q, k, h, b, positions, ctx);
    Halide::Func f(ctx.name("modify"));
    // Only the test is strict: strict_float over the whole select would take the fast-math flags
    // (FMA contraction) from the modifier's own arithmetic too (a soft-cap's tanh, 2x its cost).
    f(k, q, h, b) = Halide::select(ieee(score == minus_infinity()), score, modified);
    return {f, s.extents};
}

}  // namespace attnforge::codegen::detail
