// What an attention pattern hands to the core of its strategy (lower/materialized.hpp,
// lower/streaming.hpp) once its score product and layers are lowered (lower/attention.hpp).
#pragma once

#include <attnforge/codegen/lower/softmax_exp.hpp>
#include <attnforge/codegen/lowering.hpp>

#include <string>

namespace attnforge::codegen::detail {

struct CoreInputs {
    Lowered scores;         // masked and modified scores (k, q, h, b), in base 2 when `in_base2`
    ScoreProduct dot;       // the product they come from
    bool in_base2 = false;  // the product carries log2(e) (only masks lie between it and the softmax)
    dsl::key_band band;     // the band masks, known when generating
    RunTimeKeeps run_time;  // the masks known only at run time
    QueryPositions positions;  // where the queries sit (kv_cache)
    bool modified = false;     // some layer modifies the scores (a score_mod: ALiBi, bias, soft-cap)
    std::string name;       // "softmax_<n>": the prefix of the core's Funcs
};

// The parts of a core every strategy fills in the same way. Scores in base 2 (lower/softmax_exp.hpp):
// the product already carries log2(e), or one multiply here (inlined into whoever reads the scores).
inline void fill_common(CoreCommon& core, const CoreInputs& in) {
    Halide::Var k("k"), q("q"), h("h"), b("b");
    if (in.in_base2) {
        core.scores = in.scores.func;
    } else {
        core.scores = Halide::Func(in.name + "_base2_scores");
        core.scores(k, q, h, b) = in.scores.func(k, q, h, b) * static_cast<float>(log2_e);
    }
    core.score_extents = in.scores.extents;
    core.dot = in.dot;
    core.band = in.band;
    core.run_time = in.run_time;
    core.positions = in.positions;
    core.store_scores = in.modified;
}

}  // namespace attnforge::codegen::detail
