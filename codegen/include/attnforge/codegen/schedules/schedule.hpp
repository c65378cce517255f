// apply_schedule: schedules a lowered graph by role (see lowering.hpp), for the knobs' strategy and
// the target. Every strategy: projections as register-blocked matrix products, parallel over row
// tiles; attention cores parallel over batch × heads × query blocks; everything vectorized with the
// target's natural width; any length is correct (rounded-up internal tiles, a guarded output).
#pragma once

#include <attnforge/codegen/lowering.hpp>
#include <attnforge/codegen/schedules/knobs.hpp>

namespace attnforge::codegen {

void apply_schedule(const Roles& roles, Halide::Func output, int output_dimensions, const Knobs& knobs,
                    const Halide::Target& target);

}  // namespace attnforge::codegen
