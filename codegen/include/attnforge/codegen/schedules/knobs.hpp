// Schedule knobs: every tunable choice of the schedule library, with its range. The generator exposes
// each as a GeneratorParam of the same name; generated/kernels.list and tuning records set them.
#pragma once

#include <stdexcept>
#include <string>

namespace attnforge::codegen {

enum class Strategy {
    // A tile of scores per (batch, head, query block): all Lk scores of q_block queries, their max,
    // exps and sum, then exps · V. Memory per thread O(q_block · Lk).
    materialized,
    // Online softmax over key blocks of k_block keys: per block its scores, block max, exps and
    // exps · V, merged into a running (max, sum, accumulator). Never holds more than q_block ·
    // k_block scores: memory per thread O(q_block · (k_block + E)).
    streaming,
    // No schedule at all: Halide's defaults (reductions computed at root, the rest inlined). The
    // algorithm alone, for autoschedulers (which must start from an unscheduled pipeline) and as a
    // reference point for the schedules.
    unscheduled,
};

inline Strategy parse_strategy(const std::string& s) {
    if (s == "materialized") return Strategy::materialized;
    if (s == "streaming") return Strategy::streaming;
    if (s == "unscheduled") return Strategy::unscheduled;
    throw std::invalid_argument("unknown schedule strategy '" + s + "' (expected materialized, streaming or unscheduled)");
}

struct Knobs {
    Strategy strategy = Strategy::materialized;
    int q_block = 32;         // queries per parallel task [4, 256], multiple of q_unroll
    int k_block = 128;        // keys per streamed block [16, 1024] (streaming only)
    int q_unroll = 8;         // query rows per register tile of S = Q·Kᵀ [1, 12]
    int k_unroll = 2;         // key vectors per register tile of S [1, 4]
    int pv_unroll = 4;        // query rows per register tile of P·V (each row holds E/lanes vectors) [1, 6]
    int pv_key_block = 128;     // materialized P·V: keys per chunk, all of the block's rows per chunk, so a chunk of V
                              // stays in L1 [0 = whole rows, one tile at a time; 16, 2048]
    int proj_rows = 6;        // rows per register tile of a projection [1, 12]
    int proj_cols = 4;        // output vectors per register tile of a projection [1, 4]
    int proj_panels = 1;      // projection loop order: 1 = column panels outermost (a panel of the weights
                              // stays in L2 while every row tile passes), 0 = row tiles outermost [0, 1]
    int proj_fused = 0;       // 1: projections of the same input and width (Q, K, V of one x) in one loop nest,
                              // one fork/join instead of three; 0: one loop nest each [0, 1]
    int keys_per_task = 0;    // where K is packed into key panels: 0 = once per call, heads in parallel;
                              // 1 = inside each attention task, the keys its query block reads (one
                              // fork/join less; repeated per query block where q_block < Lq) [0, 1]
    int vector_width = 0;     // lanes; 0 = the target's natural float32 width (16 on AVX-512, 8 on AVX2)
};

}  // namespace attnforge::codegen
