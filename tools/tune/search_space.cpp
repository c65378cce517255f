#include "search_space.hpp"

#include <attnforge/codegen/schedules/knobs.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace attnforge::tune {

namespace {

// The knobs `strategy` reads and the values searched, from the knob table: every tuned knob of the
// strategy, vector widths above the target's left out, projection knobs only where there are projections.
std::vector<KnobRange> table_knobs(codegen::Strategy strategy, int natural_lanes, bool projections) {
    std::vector<KnobRange> ranges;
    for (const codegen::KnobSpec& k : codegen::knob_table) {
        if (k.tuned_values.empty() || !(k.strategies & codegen::strategy_bit(strategy))) continue;
        if (k.projections_only && !projections) continue;
        KnobRange r{std::string(k.name), {}, std::string(k.meaning)};
        for (int v : k.tuned_values)
            if (!k.is_vector_width || v <= natural_lanes) r.values.push_back(v);
        ranges.push_back(std::move(r));
    }
    return ranges;
}

// A point's knobs over the table's defaults, as the generator would take them. A knob the table no
// longer has (a record of an older build) plays no part in the rules.
codegen::Knobs knobs_of(const SchedulePoint& p) {
    codegen::Knobs k = codegen::default_knobs(codegen::parse_strategy(p.strategy));
    for (const auto& [name, value] : p.knobs)
        if (const codegen::KnobSpec* spec = codegen::find_knob(name)) k.*spec->member = value;
    return k;
}

const KnobRange* find(const std::vector<KnobRange>& ranges, const std::string& name) {
    for (const auto& r : ranges)
        if (r.name == name) return &r;
    return nullptr;
}

// The index of the value in the range closest to v.
std::size_t nearest(const KnobRange& r, int v) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < r.values.size(); ++i)
        if (std::abs(r.values[i] - v) < std::abs(r.values[best] - v)) best = i;
    return best;
}

int pick(const std::vector<int>& values, std::mt19937_64& rng) {
    return values[std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng)];
}

}  // namespace

SearchSpace::SearchSpace(std::vector<std::string> strategies, int natural_lanes, bool projections)
    : strategies_(std::move(strategies)), natural_lanes_(natural_lanes) {
    if (strategies_.empty()) throw std::invalid_argument("attnforge tune: no schedule strategy to search");
    for (const auto& s : strategies_) {
        const catalogue::StrategySpec* spec = catalogue::find_strategy(s);
        if (!spec || !spec->tuned)
            throw std::invalid_argument("attnforge tune: unknown strategy '" + s + "' (expected " +
                                        catalogue::strategy_names(true) + ")");
    }
    for (const catalogue::StrategySpec& spec : catalogue::strategy_table)
        if (spec.tuned) knobs_.emplace(std::string(spec.name), table_knobs(spec.strategy, natural_lanes, projections));
}

const std::vector<KnobRange>& SearchSpace::knobs(const std::string& strategy) const {
    auto it = knobs_.find(strategy);
    if (it == knobs_.end()) throw std::invalid_argument("attnforge tune: strategy '" + strategy + "' has no knobs");
    return it->second;
}

SchedulePoint SearchSpace::default_point(const std::string& strategy) const {
    SchedulePoint p{strategy, {}};
    for (const auto& r : knobs(strategy)) {
        const codegen::KnobSpec& k = *codegen::find_knob(r.name);
        const int value = codegen::default_for(k, natural_lanes_);
        p.knobs[r.name] = k.is_vector_width && value == 0 ? natural_lanes_ : value;
    }
    return p;
}

SchedulePoint SearchSpace::complete(SchedulePoint p) const {
    if (p.is_autoscheduler()) return p;
    for (const auto& [name, value] : default_point(p.strategy).knobs) p.knobs.try_emplace(name, value);
    return p;
}

SchedulePoint SearchSpace::random_point(std::mt19937_64& rng) const {
    SchedulePoint p{strategies_[std::uniform_int_distribution<std::size_t>(0, strategies_.size() - 1)(rng)], {}};
    for (const auto& r : knobs(p.strategy)) p.knobs[r.name] = pick(r.values, rng);
    return repair(std::move(p), rng);
}

SchedulePoint SearchSpace::mutate(const SchedulePoint& parent, std::mt19937_64& rng) const {
    SchedulePoint p = parent;
    std::uniform_real_distribution<double> u(0, 1);
    if (strategies_.size() > 1 && u(rng) < 0.15) {
        // The other strategy, keeping the knobs both read, defaults for the rest.
        const std::string other = p.strategy == strategies_[0] ? strategies_[1] : strategies_[0];
        SchedulePoint q = default_point(other);
        for (auto& [name, value] : q.knobs)
            if (auto it = p.knobs.find(name); it != p.knobs.end()) value = it->second;
        return repair(std::move(q), rng);
    }
    const auto& ranges = knobs(p.strategy);
    const int moves = u(rng) < 0.7 ? 1 : 2;
    for (int m = 0; m < moves; ++m) {
        const KnobRange& r = ranges[std::uniform_int_distribution<std::size_t>(0, ranges.size() - 1)(rng)];
        int& v = p.knobs[r.name];
        if (u(rng) < 0.2) {
            v = pick(r.values, rng);
        } else {
            const std::size_t i = nearest(r, v);
            const bool up = i == 0 || (i + 1 < r.values.size() && u(rng) < 0.5);
            v = r.values[up ? std::min(i + 1, r.values.size() - 1) : i - 1];
        }
    }
    return repair(std::move(p), rng);
}

SchedulePoint SearchSpace::crossover(const SchedulePoint& a, const SchedulePoint& b, std::mt19937_64& rng) const {
    if (a.strategy != b.strategy) return mutate(a, rng);
    SchedulePoint p = a;
    std::bernoulli_distribution coin(0.5);
    for (auto& [name, value] : p.knobs)
        if (coin(rng)) value = b.knobs.at(name);
    return repair(std::move(p), rng);
}

bool SearchSpace::admissible(const SchedulePoint& p) const {
    return p.is_autoscheduler() || codegen::admissible(knobs_of(p));
}

SchedulePoint SearchSpace::repair(SchedulePoint p, std::mt19937_64& rng) const {
    // Resample a searched knob of a failing rule until every rule holds (the defaults always do).
    const auto& ranges = knobs(p.strategy);
    for (int attempt = 0; attempt < 64 && !admissible(p); ++attempt) {
        for (const codegen::KnobRule& rule : codegen::knob_rules) {
            if (rule.holds(knobs_of(p))) continue;
            std::vector<const KnobRange*> searched;
            for (std::string_view name : rule.reads)
                if (const KnobRange* r = name.empty() ? nullptr : find(ranges, std::string(name)))
                    searched.push_back(r);
            if (searched.empty()) continue;
            const KnobRange& r = *searched[std::uniform_int_distribution<std::size_t>(0, searched.size() - 1)(rng)];
            p.knobs[r.name] = pick(r.values, rng);
        }
    }
    return admissible(p) ? p : default_point(p.strategy);
}

std::string SearchSpace::describe() const {
    // The knob table as Markdown (docs/tuning.md prints this very text; tests/tune/check_knob_docs.cmake
    // compares), then the rules.
    std::string s =
        "| knob | level | strategies | default | range | searched | meaning |\n"
        "| --- | --- | --- | ---: | --- | --- | --- |\n";
    for (const codegen::KnobSpec& k : codegen::knob_table) {
        std::string values;
        for (int v : k.tuned_values)
            if (!k.is_vector_width || v <= natural_lanes_) values += (values.empty() ? "" : ", ") + std::to_string(v);
        std::string strategies;  // the tuned strategies that read it, by the strategy table's names
        for (const catalogue::StrategySpec& spec : catalogue::strategy_table)
            if (spec.tuned && (k.strategies & codegen::strategy_bit(spec.strategy)))
                strategies += (strategies.empty() ? "" : ", ") + std::string(spec.name);
        s += fmt::format("| `{}` | {} | {} | {} | [{}, {}] | {} | {} |\n", k.name,
                         k.level == codegen::KnobLevel::algorithm ? "algorithm" : "schedule", strategies,
                         k.avx2_default ? fmt::format("{} (AVX2: {})", k.default_value, k.avx2_default)
                                        : std::to_string(k.default_value),
                         k.min, k.max, values.empty() ? "not searched" : values, k.meaning);
    }
    s += "\nRules a searched point must satisfy:\n";
    for (const codegen::KnobRule& rule : codegen::knob_rules) s += fmt::format("- {}\n", rule.text);
    return s;
}

}  // namespace attnforge::tune
