// plan_for: the algorithm plan the knobs make (the lowering reads the plan, never the knobs).
// apply_schedule: schedules a lowered graph by role (see lowering.hpp), for the knobs' strategy, one
// schedule per core type (std::visit over AttentionCore). Every strategy: projections as register-blocked matrix
// products, parallel over row tiles; attention cores parallel over batch × heads × query blocks; everything vectorized
// with the target's natural width; any length is correct (rounded-up internal tiles, a guarded output).
#pragma once

#include <attnforge/codegen/lowering.hpp>
#include <attnforge/codegen/schedules/knobs.hpp>

namespace attnforge::codegen {

// The vector width of every schedule: the knob, or the target's natural float32 width when it is 0.
int vector_lanes(const Knobs& knobs, const Halide::Target& target);

// The algorithm knobs (knob_table's KnobLevel::algorithm) as the plan of the knobs' strategy.
AlgorithmPlan plan_for(const Knobs& knobs, const Halide::Target& target);

// The pipeline's output and the lowered Func it copies; same_indices when output(i...) = result(i...)
// exactly (every batched graph), so that the result can be computed straight into the output.
struct PipelineOutput {
    Halide::Func func, result;
    bool same_indices = false;
};

// `plan` is the one the graph was lowered with (plan_for(knobs, target)); the schedule knobs come from `knobs`.
void apply_schedule(const Roles& roles, const PipelineOutput& output, const AlgorithmPlan& plan, const Knobs& knobs);

// The pre-pass of block_mask kernels, computed into `out` (i, qt, h, b): tiles in parallel, each
// tile's rows reduced along vectors of queries.
void schedule_live_key_blocks(const LiveKeyBlocks& live, Halide::Func out, int lanes);

}  // namespace attnforge::codegen
