// The algorithm plan: the sizes that shape the Funcs of a lowered graph, and nothing the schedule alone
// decides. One type per strategy, as Triton's kernels take BLOCK_M and BLOCK_N: the lowering reads the
// plan, never the knobs (schedules/knobs.hpp makes the plan from them, plan_for). Adding a strategy is
// a plan type here, its core in lowering.hpp and lower/, and its schedule in src/schedules/.
#pragma once

#include <variant>

namespace attnforge::codegen {

// What every strategy's Funcs are tiled by.
struct Tiles {
    int lanes = 16;               // float32 lanes per vector: rows are reduced lane by lane (reduce_by_lanes)
    int query_tile = 32;          // BLOCK_M: queries per attention task; bands are skipped per whole tile
    int key_panel = 32;           // keys per packed panel of K and per score register tile (a whole number of vectors)
    int projection_columns = 64;  // outputs per column tile of a projection: wider outputs are read clamped
    // Q·Kᵀ and P·V multiply pairs of bf16 (lower/bf16_pairs.hpp: vdpbf16ps): bf16 kernels on targets with
    // AVX512_BF16. Q, K and V are rounded to bf16 where they are packed (exact for a kernel's own inputs; the
    // projections' results and computed inputs rounded: lower/linear.hpp), P where it meets V; sums, max and
    // softmax stay float32.
    bool bf16_products = false;
    // Under bf16_products, on targets with AMX (Sapphire Rapids and later: Halide's AVX512_SapphireRapids),
    // the prefill strategies' Q·Kᵀ and P·V are AMX tile products (lower/amx_tiles.hpp): 16 × 16 float32
    // accumulators over 32 bf16 a step, where E is a multiple of 32. Same roundings as bf16_products.
    bool amx_products = false;
    // Score products over 8-bit codes (a quantized cache with a scale per token) on integer dot products (vpdpbusd:
    // AVX512_VNNI, Halide's avx512_zen4 and later), the queries split into int8 digits (lower/query_digits.hpp):
    // decode's Q·Kᵀ where a task has four query rows or more (lower/decode_product.hpp). Any storage type.
    bool integer_products = false;
};

// All Lk scores of a query tile at once (memory O(query_tile · Lk) per thread).
struct MaterializedPlan : Tiles {
    // Under a causal or sliding-window band, key panels outside a query tile's band are never computed.
    // Off for the unscheduled pipeline (the algorithm as written, for Halide's autoschedulers).
    bool skip_band_panels = true;
};

// Online softmax over key tiles (memory O(query_tile · (key_tile + E)) per thread).
struct StreamingPlan : Tiles {
    int key_tile = 128;  // BLOCK_N: keys per streamed tile
};

// Decoding (few queries over a long key cache): the memory stream is the bottleneck. Each task reads one
// KV head's keys and values once, in their storage layout, for every query and every query head of its
// group, over a split of split_keys keys (flash-decoding: splits in parallel, so that B · Hkv smaller
// than the thread count still uses every core), online softmax over key tiles of key_tile keys inside
// a split, the splits' (max, sum, output) merged by their log-sum-exp. The score product of one key is
// reduced lane by lane along E (E/lanes vector products, the lanes folded), not over packed key panels.
struct DecodePlan : Tiles {
    int key_tile = 128;     // keys per tile of the online softmax inside a split
    int split_keys = 1024;  // keys per parallel split (a multiple of key_tile)
    // Query rows taken together inside the keys of Q·Kᵀ where a GQA group's heads share the vector lanes
    // (lower/decode_product.hpp): 1 to 4 (each chunk of K then serves that many queries × the group from registers).
    int query_rows = 1;
    // Keys whose per-lane sums fold into one vector of scores (lower/decode_product.hpp): the schedule takes
    // the keys of Q·Kᵀ this many at a time, independent chains of FMAs.
    int keys_per_step = 4;
};

using AlgorithmPlan = std::variant<MaterializedPlan, StreamingPlan, DecodePlan>;

inline const Tiles& tiles(const AlgorithmPlan& plan) {
    return std::visit([](const Tiles& t) -> const Tiles& { return t; }, plan);
}

}  // namespace attnforge::codegen
