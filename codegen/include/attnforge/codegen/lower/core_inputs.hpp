// What an attention pattern hands to the core of its strategy (lower/materialized.hpp,
// lower/streaming.hpp) once its score product and layers are lowered (lower/attention.hpp).
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>
#include <attnforge/codegen/lowering.hpp>

#include <string>

namespace attnforge::codegen::detail {

struct CoreInputs {
    Lowered scores;         // masked and modified scores (k, q, h, b), in base 2 when `in_base2`
    Lowered full_block_scores;  // the scores before the predicates that fill blocks (CoreCommon's), if any
    ScoreProduct dot;       // the product they come from
    bool in_base2 = false;  // the product carries log2(e) (only masks lie between it and the softmax)
    KeyBand band;           // the band masks
    RunTimeKeeps run_time;  // the masks known only at run time
    QueryPositions positions;  // where the queries sit (kv_cache)
    bool modified = false;     // some layer modifies the scores (a score_mod: ALiBi, bias, soft-cap)
    std::string name;       // "softmax_<n>": the prefix of the core's Funcs
};

// The parts of a core every strategy fills in the same way. Scores in base 2 (lower/softmax_exp.hpp):
// the product already carries log2(e), or one multiply here (inlined into whoever reads the scores).
inline void fill_common(CoreCommon& core, const CoreInputs& in) {
    Halide::Var k("k"), q("q"), h("h"), b("b");
    auto in_base2 = [&](const Halide::Func& scores, const std::string& name) {
        if (in.in_base2) return scores;
        Halide::Func f(name);
        f(k, q, h, b) = scores(k, q, h, b) * static_cast<float>(log2_e);
        return f;
    };
    if (in.full_block_scores.func.defined()) {
        // The predicates that fill blocks, over the scores before them (−∞ times log2(e) is −∞).
        core.full_block_scores = in_base2(in.full_block_scores.func, in.name + "_base2_full_block_scores");
        Halide::Expr keep = Halide::Internal::const_true();
        for (const RunTimeKeeps::PredicateBounds& bounds : in.run_time.block_truths)
            if (bounds.fills) keep = keep && bounds.keep(k, q, h, b);
        core.scores = Halide::Func(in.name + "_base2_scores");
        core.scores(k, q, h, b) = ieee(Halide::select(keep, core.full_block_scores(k, q, h, b), minus_infinity()));
    } else {
        core.scores = in_base2(in.scores.func, in.name + "_base2_scores");
    }
    core.score_extents = in.scores.extents;
    core.dot = in.dot;
    core.band = in.band;
    core.run_time = in.run_time;
    core.positions = in.positions;
    core.store_scores = in.modified;
}

}  // namespace attnforge::codegen::detail
