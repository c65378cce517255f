// The knob table: every tunable choice of a generated kernel, once. Each row gives the knob's name (as
// kernel lines, tuning records and the generator's GeneratorParams spell it), the member of Knobs it
// sets, its default, its range (Halide checks it when the generator is given a value), the strategies
// that read it, whether it shapes the algorithm (the AlgorithmPlan: what the Funcs are) or only the
// schedule (how they are computed), the values `attnforge tune` searches, and its meaning.
//
// Everything else derives from this table: the generator's parameters (attention_generator.hpp), the
// algorithm plan (plan_for), the tuner's search space, defaults and admissibility (tools/tune), the
// help text of `attnforge tune --help-knobs` and docs/tuning.md (tests/codegen/test_knob_table.cpp
// checks they agree). Adding a knob: a row here and the schedule (or plan) that reads it.
//
// No Halide here: the tuner and the docs read the table without the compiler.
#pragma once

#include <attnforge/catalogue/strategies.hpp>

#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnforge::codegen {

// The strategies: the strategy table (catalogue/strategies.hpp), which the catalogue reads too.
using catalogue::Strategy;

// The table's row of a strategy name; std::invalid_argument naming the known ones otherwise.
inline Strategy parse_strategy(const std::string& s) {
    if (const catalogue::StrategySpec* spec = catalogue::find_strategy(s)) return spec->strategy;
    throw std::invalid_argument("unknown schedule strategy '" + s + "' (expected " + catalogue::strategy_names() + ")");
}

// The value of every knob of one kernel. Defaults are the table's (default_knobs()), not written here.
struct Knobs {
    Strategy strategy = Strategy::materialized;
    int q_block = 0, k_block = 0, k_unroll = 0, vector_width = 0, proj_cols = 0, block_mask = 0;
    int q_unroll = 0, pv_unroll = 0, pv_cols = 0, pv_key_block = 0, proj_rows = 0, proj_panels = 0,
        proj_fused = 0, keys_per_task = 0, split_keys = 0, q_rows = 0, key_panels_outer = 0;
};

// Which strategies read a knob (a bit set). any_strategy: the query-tiled ones (materialized, streaming).
enum StrategySet : unsigned {
    materialized_only = 1,
    streaming_only = 2,
    any_strategy = 3,
    decode_only = 4,
    streaming_or_decode = 6,
    every_strategy = 7,
};
constexpr unsigned strategy_bit(Strategy s) {
    return s == Strategy::streaming ? streaming_only : s == Strategy::decode ? decode_only : materialized_only;
}

enum class KnobLevel {
    algorithm,  // shapes the Funcs (the AlgorithmPlan the lowering reads): tile sizes, panels, lanes
    schedule,   // read by the schedule only
};

struct KnobSpec {
    std::string_view name;
    int Knobs::*member;
    int default_value;  // on AVX-512 targets (32 vector registers of 16 float lanes)
    int avx2_default;   // on targets whose vectors hold 8 floats (AVX2: 16 registers); 0: default_value
    int min, max;
    unsigned strategies;
    KnobLevel level;
    std::span<const int> tuned_values;  // what `attnforge tune` searches, increasing; empty: not tuned
    bool projections_only;              // read only where a graph has linear projections
    bool is_vector_width;               // 0 = the target's natural width; tuned values above it are skipped
    std::string_view meaning;
};

namespace knob_values {
inline constexpr int q_block[] = {8, 16, 24, 32, 48, 64, 96, 128};
inline constexpr int k_block[] = {32, 64, 128, 256, 512, 1024, 2048};  // the large ones: decode tiles
inline constexpr int k_unroll[] = {1, 2, 3, 4};
inline constexpr int vector_width[] = {8, 16};
inline constexpr int proj_cols[] = {1, 2, 3, 4};
inline constexpr int q_unroll[] = {1, 2, 3, 4, 6, 8, 10, 12};
inline constexpr int pv_unroll[] = {1, 2, 3, 4, 6};
inline constexpr int pv_cols[] = {0, 1, 2, 4};
inline constexpr int pv_key_block[] = {0, 32, 64, 128, 256, 512};
inline constexpr int proj_rows[] = {1, 2, 4, 6, 8, 12};
inline constexpr int zero_one[] = {0, 1};
inline constexpr int split_keys[] = {256, 512, 1024, 2048, 4096, 8192};
inline constexpr int q_rows[] = {1, 4};
}  // namespace knob_values

// clang-format off
inline constexpr std::array knob_table = {
    // name             member                 default, AVX2 default, min, max, strategies, level, tuned values, proj, lanes
    KnobSpec{"q_block",       &Knobs::q_block,       32, 0,  4,  256, any_strategy,    KnobLevel::algorithm, knob_values::q_block,      false, false,
             "queries per parallel task, the query tile (Triton's BLOCK_M); a multiple of q_unroll and pv_unroll"},
    KnobSpec{"k_block",       &Knobs::k_block,       128, 0, 16, 4096, streaming_or_decode, KnobLevel::algorithm, knob_values::k_block, false, false,
             "keys per streamed tile of the online softmax (Triton's BLOCK_N); decode with 8-lane vectors (AVX2): multiples of 512 become 512"},
    KnobSpec{"split_keys",    &Knobs::split_keys,    1024, 0, 16, 65536, decode_only,  KnobLevel::algorithm, knob_values::split_keys,  false, false,
             "keys per parallel split of a decode task (flash-decoding); a multiple of k_block"},
    KnobSpec{"q_rows",        &Knobs::q_rows,        1, 0,   1,  4,   decode_only,     KnobLevel::algorithm, knob_values::q_rows,       false, false,
             "decode, a GQA group's heads in the vector lanes: query rows sharing each chunk of K in Q·Kᵀ (1-4)"},
    KnobSpec{"k_unroll",      &Knobs::k_unroll,      2, 0,   1,  4,   any_strategy,    KnobLevel::algorithm, knob_values::k_unroll,     false, false,
             "key vectors per register tile of S = Q·Kᵀ, and per packed panel of K"},
    KnobSpec{"vector_width",  &Knobs::vector_width,  0, 0,   0,  16,  every_strategy,  KnobLevel::algorithm, knob_values::vector_width, false, true,
             "float32 lanes of every vector (0 = the target's: 16 on AVX-512, 8 on AVX2)"},
    KnobSpec{"proj_cols",     &Knobs::proj_cols,     4, 2,   1,  4,   any_strategy,    KnobLevel::algorithm, knob_values::proj_cols,    true,  false,
             "output vectors per register tile of a projection (outputs past a whole tile are read clamped)"},
    KnobSpec{"block_mask",    &Knobs::block_mask,    0, 0,   0,  1,   streaming_only,  KnobLevel::algorithm, {},                        false, false,
             "1: the kernel takes a pre-pass's live key tiles per query tile and visits only those (run-time masks)"},
    KnobSpec{"q_unroll",      &Knobs::q_unroll,      8, 4,   1,  12,  any_strategy,    KnobLevel::schedule,  knob_values::q_unroll,     false, false,
             "query rows per register tile of S = Q·Kᵀ"},
    KnobSpec{"pv_unroll",     &Knobs::pv_unroll,     4, 2,   1,  6,   any_strategy,    KnobLevel::schedule,  knob_values::pv_unroll,    false, false,
             "query rows per register tile of P·V (each row holds E/lanes vectors)"},
    KnobSpec{"pv_cols",       &Knobs::pv_cols,       0, 4,   0,  16,  any_strategy,    KnobLevel::schedule,  knob_values::pv_cols,      false, false,
             "vectors of E per register tile of P·V (0 = all of E; with pv_key_block = 0, always all)"},
    KnobSpec{"pv_key_block",  &Knobs::pv_key_block,  128, 64, 0,  2048, materialized_only, KnobLevel::schedule, knob_values::pv_key_block, false, false,
             "keys per chunk of P·V, so a chunk of V stays in L1 (0 = whole rows, one tile at a time)"},
    KnobSpec{"proj_rows",     &Knobs::proj_rows,     6, 0,   1,  12,  any_strategy,    KnobLevel::schedule,  knob_values::proj_rows,    true,  false,
             "rows per register tile of a projection"},
    KnobSpec{"proj_panels",   &Knobs::proj_panels,   1, 0,   0,  1,   any_strategy,    KnobLevel::schedule,  knob_values::zero_one,     true,  false,
             "projection loop order: 1 = column panels of the weights outermost (a panel stays in L2), 0 = row tiles"},
    KnobSpec{"proj_fused",    &Knobs::proj_fused,    0, 0,   0,  1,   any_strategy,    KnobLevel::schedule,  knob_values::zero_one,     true,  false,
             "projections of the same input and width (Q, K, V of one x) in one loop nest (1) or one each (0)"},
    KnobSpec{"keys_per_task", &Knobs::keys_per_task, 0, 0,   0,  1,   any_strategy,    KnobLevel::schedule,  knob_values::zero_one,     false, false,
             "K packed into key panels once per call, heads in parallel (0), or inside each attention task (1)"},
    KnobSpec{"key_panels_outer", &Knobs::key_panels_outer, 0, 0, 0, 1, any_strategy,   KnobLevel::schedule,  knob_values::zero_one,     false, false,
             "S = Q·Kᵀ loop order: each panel of K through every row tile of the query block (1: read once per task, then from L1), or each row tile through every panel (0)"},
};
// clang-format on

inline const KnobSpec* find_knob(std::string_view name) {
    for (const KnobSpec& k : knob_table)
        if (k.name == name) return &k;
    return nullptr;
}

// A knob's default on a target whose natural vector holds `natural_lanes` floats. The register tiles
// are sized for AVX-512's 32 registers; AVX2 has 16, where those tiles spill (sdpa's default schedule
// ran at 37 % of the FMA peak on Zen 3). The AVX2 defaults are `attnforge tune`'s best on Zen 3 (sdpa,
// L = 2048, one thread): P·V tiles of 2 rows by half of E = 64, 8 accumulators.
inline int default_for(const KnobSpec& spec, int natural_lanes) {
    return natural_lanes < 16 && spec.avx2_default != 0 ? spec.avx2_default : spec.default_value;
}

inline Knobs default_knobs(Strategy strategy = Strategy::materialized, int natural_lanes = 16) {
    Knobs k;
    k.strategy = strategy;
    for (const KnobSpec& spec : knob_table) k.*spec.member = default_for(spec, natural_lanes);
    return k;
}

// Sets one knob within its range; throws std::invalid_argument naming the knob otherwise.
inline void set_knob(Knobs& knobs, const KnobSpec& spec, int value) {
    if (value < spec.min || value > spec.max)
        throw std::invalid_argument("knob " + std::string(spec.name) + "=" + std::to_string(value) + " is outside [" +
                                    std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]");
    knobs.*spec.member = value;
}
// The same by name; an unknown name is an std::invalid_argument too.
inline void set_knob(Knobs& knobs, std::string_view name, int value) {
    const KnobSpec* spec = find_knob(name);
    if (!spec) throw std::invalid_argument("unknown knob '" + std::string(name) + "'");
    set_knob(knobs, *spec, value);
}

// Knob values that go together. A rule names the knobs it reads: the tuner resamples one of them when
// the rule fails.
struct KnobRule {
    std::string_view text;
    std::array<std::string_view, 3> reads;
    bool (*holds)(const Knobs&);
};
inline constexpr std::array knob_rules = {
    KnobRule{"split_keys is a multiple of k_block (whole key tiles per split)",
             {"split_keys", "k_block", ""},
             [](const Knobs& k) { return k.strategy != Strategy::decode || k.split_keys % k.k_block == 0; }},
    KnobRule{"q_block is a multiple of q_unroll and of pv_unroll (whole register tiles per query tile)",
             {"q_block", "q_unroll", "pv_unroll"},
             [](const Knobs& k) { return k.q_block % k.q_unroll == 0 && k.q_block % k.pv_unroll == 0; }},
    // Accumulators of a register tile plus the vectors it loads, within the 32 registers of AVX-512
    // (AVX2 has 16, where the search only finds slower points).
    KnobRule{"q_unroll · k_unroll + k_unroll ≤ 30 (a score tile fits the vector registers)",
             {"k_unroll", "q_unroll", ""},
             [](const Knobs& k) { return k.q_unroll * k.k_unroll + k.k_unroll <= 30; }},
    KnobRule{"proj_rows · proj_cols + proj_cols ≤ 30 (a projection tile fits the vector registers)",
             {"proj_cols", "proj_rows", ""},
             [](const Knobs& k) { return k.proj_rows * k.proj_cols + k.proj_cols <= 30; }},
};

inline bool admissible(const Knobs& k) {
    for (const KnobRule& rule : knob_rules)
        if (!rule.holds(k)) return false;
    return true;
}

}  // namespace attnforge::codegen
