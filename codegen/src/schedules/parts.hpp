// The pieces of the schedule library the strategies share (src/schedules/*.cpp), private to codegen/src:
// register tiles, the query tiles and tasks of the prefill strategies, packing K and V, and one
// schedule_core per attention core type (materialized.cpp, streaming.cpp, decode.cpp), which
// apply_schedule (src/schedule.cpp) visits.
#pragma once

#include <attnforge/codegen/schedules/schedule.hpp>

#include <initializer_list>
#include <vector>

namespace attnforge::codegen::schedules {

using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

// Where a role's result is computed: see owner_of in apply_schedule.
struct Owner {
    Func func;
    TailStrategy tail;
};

// Tails: every Func scheduled here reads its inputs clamped (see lower/), so tiles are rounded up
// (TailStrategy::RoundUp): whole register tiles and vectors, no tail branches. Only the pipeline's
// output, written into the caller's buffer, guards its tails.

void reduce_row_by_lanes(Func row, Func per_lane, const Halide::LoopLevel& level, int lanes);
void register_tile_accumulator(Func sum, const Halide::LoopLevel& level, int lanes, int columns, int rows,
                               bool pairs = false);
// AMX tiles: 16 rows by 16 float32 columns (lower/amx_tiles.hpp).
inline constexpr int amx_tile_rows = 16, amx_tile_columns = 16;
// A projection's output tile on AMX: two tiles of rows by projection_columns (its A tiles read once per 16 columns,
// its B tiles once per 16 rows).
inline constexpr int amx_projection_rows = 32;
Func amx_tile_product(Func sum, const Halide::LoopLevel& level, int rows_arg);
int pv_columns(const Knobs& k, int e_vectors);
Var split_value_columns(Halide::Stage update, const Var& eo, const Var& eg, const Var& eu, const Knobs& k,
                        int head_width, int lanes);
std::vector<Halide::VarOrRVar> value_tile_order(const RVar* pair, const Var& ei, const Var& tile_e, const Var& qu,
                                                const RVar& keys, const Var* e_tiles,
                                                std::initializer_list<Halide::VarOrRVar> outer);
Var schedule_matrix_product(Owner out_owner, Func sum, const Tiles& tiles, const Knobs& k, bool pairs, bool amx);
void pack_keys(const CoreCommon& core, const Halide::LoopLevel& task, const Knobs& k, int lanes);
void schedule_score_product(const CoreCommon& core, const Halide::LoopLevel& level, const Halide::LoopLevel& task,
                            const Tiles& tiles, const Knobs& k);
void parallel_query_blocks(Owner owner, Var qi, Var t, const Tiles& tiles);
void pack_values(const CoreCommon& core, int lanes);
void parallel_row_blocks(Owner owner, Var t, const Tiles& tiles);

// One schedule per attention core type.
void schedule_core(MaterializedCore core, const Owner& owner, const Tiles& tiles, const Knobs& k);
void schedule_core(StreamingCore core, const Owner& owner, const Tiles& tiles, const Knobs& k);
void schedule_core(DecodeCore core, const Owner& owner, const Tiles& tiles, const Knobs& k);

}  // namespace attnforge::codegen::schedules
