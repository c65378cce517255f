// The strategy table: every schedule strategy of the library, once, as the knob table
// (codegen/schedules/knobs.hpp) is every knob. Each row gives the strategy's name (as kernel lines, tuning
// records and the generator's `strategy` parameter spell it), the algorithm plan it lowers with
// (codegen/plan.hpp), the results it computes, whether it takes a pre-pass's live key blocks
// (block_mask=1), whether `attnforge tune` searches it, the size class its kernels serve unless a line says
// otherwise, and its meaning. The catalogue, the generator, the tuner and their messages read it; adding a
// strategy is a row here, its plan and core (codegen/lower/), and its schedule (codegen/src/schedules/).
//
// No Halide and no DSL: the catalogue program, compiled at configure time from catalogue/ alone, reads it.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace attnforge::catalogue {

enum class Strategy { materialized, streaming, decode, unscheduled };

// The results a kernel computes (kernel lines' second field).
enum ResultSet : unsigned {
    output_only = 1,           // the attention output
    every_result = 1 | 2 | 4,  // the output, the attention weights and their rows' log-sum-exp
};
inline constexpr std::array<std::string_view, 3> result_names = {"output", "attention_weights", "logsumexp"};

struct StrategySpec {
    Strategy strategy;
    std::string_view name;
    std::string_view plan;      // the codegen::AlgorithmPlan alternative it lowers with
    unsigned results;           // ResultSet: what its kernels may compute
    bool block_mask;            // may take a pre-pass's live key blocks per query tile (knob block_mask=1)
    bool tuned;                 // attnforge tune searches its knobs
    std::string_view sizes;     // the size class it serves unless its line says otherwise (also what a
                                // tuned kernel of it inherits where its record bounds Lk alone)
    std::string_view meaning;
};

// clang-format off
inline constexpr std::array strategy_table = {
    StrategySpec{Strategy::materialized, "materialized", "MaterializedPlan", every_result, false, true, "any",
                 "all Lk scores of a query tile at once, their max, exps and sum, then exps · V "
                 "(memory O(query_tile · Lk) per thread)"},
    StrategySpec{Strategy::streaming, "streaming", "StreamingPlan", output_only, true, true, "any",
                 "online softmax over key tiles merged into a running (max, sum, accumulator) "
                 "(memory O(query_tile · (key_tile + E)) per thread)"},
    StrategySpec{Strategy::decode, "decode", "DecodePlan", output_only, false, true, "Lq<=16",
                 "few queries over a long key cache: per (key split, KV head, batch entry) one pass over the "
                 "split's keys for every query and head of the group, splits merged by log-sum-exp"},
    StrategySpec{Strategy::unscheduled, "unscheduled", "MaterializedPlan", every_result, false, false, "any",
                 "the materialized algorithm with Halide's defaults and no schedule: what autoschedulers "
                 "start from, and a reference point"},
};
// clang-format on

inline const StrategySpec& spec_of(Strategy s) {
    for (const StrategySpec& spec : strategy_table)
        if (spec.strategy == s) return spec;
    return strategy_table.front();  // unreachable: every enumerator has its row
}

inline const StrategySpec* find_strategy(std::string_view name) {
    for (const StrategySpec& spec : strategy_table)
        if (spec.name == name) return &spec;
    return nullptr;
}

// "materialized, streaming, decode or unscheduled": the names for messages, those `tuned` alone if asked.
inline std::string strategy_names(bool tuned_only = false) {
    std::string out;
    std::string_view last;
    for (const StrategySpec& spec : strategy_table) {
        if (tuned_only && !spec.tuned) continue;
        if (!last.empty()) out += (out.empty() ? "" : ", ") + std::string(last);
        last = spec.name;
    }
    return out.empty() ? std::string(last) : out + " or " + std::string(last);
}

// Whether a strategy's kernels may compute `result` (one of result_names).
inline bool gives(const StrategySpec& spec, std::string_view result) {
    for (std::size_t i = 0; i < result_names.size(); ++i)
        if (result_names[i] == result) return (spec.results >> i) & 1;
    return false;
}

// The names of the strategies `attnforge tune` searches.
inline std::vector<std::string> tuned_strategy_names() {
    std::vector<std::string> out;
    for (const StrategySpec& spec : strategy_table)
        if (spec.tuned) out.emplace_back(spec.name);
    return out;
}

// The tuned strategies that serve every size and compute `result`: what attnforge tune searches unless told
// otherwise (a strategy of a bounded class, decode, where the build's rule picks it: tools/tune/main.cpp).
inline std::vector<std::string> general_strategies(std::string_view result = "output") {
    std::vector<std::string> out;
    for (const StrategySpec& spec : strategy_table)
        if (spec.tuned && spec.sizes == "any" && gives(spec, result)) out.emplace_back(spec.name);
    return out;
}

}  // namespace attnforge::catalogue
