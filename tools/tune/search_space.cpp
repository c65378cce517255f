#include "search_space.hpp"

#include <attnforge/codegen/schedules/knobs.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace attnforge::tune {

namespace {

std::vector<KnobRange> common_knobs(int natural_lanes) {
    std::vector<int> lanes = {8};
    if (natural_lanes >= 16) lanes.push_back(16);
    return {
        {"q_block", {8, 16, 24, 32, 48, 64, 96, 128},
         "queries per parallel task (the parallel grain of the attention core); a multiple of q_unroll and pv_unroll"},
        {"q_unroll", {1, 2, 3, 4, 6, 8, 10, 12}, "query rows per register tile of S = Q·Kᵀ"},
        {"k_unroll", {1, 2, 3, 4}, "key vectors per register tile of S (and per packed panel of K)"},
        {"pv_unroll", {1, 2, 3, 4, 6}, "query rows per register tile of P·V (each row holds E/lanes vectors)"},
        {"proj_rows", {1, 2, 4, 6, 8, 12}, "rows per register tile of a projection (the parallel grain of projections)"},
        {"proj_cols", {1, 2, 3, 4}, "output vectors per register tile of a projection"},
        {"proj_panels", {0, 1}, "projection loop order: 1 = column panels of the weights outermost, 0 = row tiles"},
        {"proj_fused", {0, 1}, "projections of the same input (Q, K, V of one x) in one loop nest (1) or one each (0)"},
        {"keys_per_task", {0, 1}, "K packed into key panels once per call (0) or inside each attention task (1)"},
        {"vector_width", lanes, "float32 lanes of every vector (16 = AVX-512, 8 = AVX2 width)"},
    };
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
    for (const auto& s : strategies_)
        if (s != "materialized" && s != "streaming")
            throw std::invalid_argument("attnforge tune: unknown strategy '" + s + "' (expected materialized or streaming)");
    materialized_ = common_knobs(natural_lanes);
    materialized_.push_back({"pv_key_block", {0, 32, 64, 128, 256, 512},
                             "keys per chunk of P·V, so a chunk of V stays in L1 (0 = whole rows, one tile at a time)"});
    streaming_ = common_knobs(natural_lanes);
    streaming_.push_back({"k_block", {32, 64, 128, 256, 512}, "keys per streamed block of the online softmax"});
    if (!projections)
        for (auto* ranges : {&materialized_, &streaming_})
            std::erase_if(*ranges, [](const KnobRange& r) { return r.name.rfind("proj_", 0) == 0; });
}

const std::vector<KnobRange>& SearchSpace::knobs(const std::string& strategy) const {
    if (strategy == "materialized") return materialized_;
    if (strategy == "streaming") return streaming_;
    throw std::invalid_argument("attnforge tune: strategy '" + strategy + "' has no knobs");
}

SchedulePoint SearchSpace::default_point(const std::string& strategy) const {
    const codegen::Knobs d{};
    SchedulePoint p{strategy, {}};
    const std::map<std::string, int> all = {
        {"q_block", d.q_block},     {"k_block", d.k_block},           {"q_unroll", d.q_unroll},
        {"k_unroll", d.k_unroll},   {"pv_unroll", d.pv_unroll},       {"pv_key_block", d.pv_key_block},
        {"proj_rows", d.proj_rows}, {"proj_cols", d.proj_cols},
        {"proj_panels", d.proj_panels},     {"proj_fused", d.proj_fused},       {"keys_per_task", d.keys_per_task},
        {"vector_width", d.vector_width == 0 ? natural_lanes_ : d.vector_width}};
    for (const auto& r : knobs(strategy)) p.knobs[r.name] = all.at(r.name);
    return p;
}

SchedulePoint SearchSpace::complete(SchedulePoint p) const {
    if (p.is_autoscheduler()) return p;
    for (const auto& [name, value] : default_point(p.strategy).knobs) p.knobs.try_emplace(name, value);
    return p;
}

SchedulePoint SearchSpace::random_point(std::mt19937_64& rng) const {
    SchedulePoint p{
                        strategies_[std::uniform_int_distribution<std::size_t>(0, strategies_.size() - 1)(rng)],
                    {}};
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
    if (p.is_autoscheduler()) return true;
    const auto& k = p.knobs;
    const int q_block = k.at("q_block");
    if (q_block % k.at("q_unroll") != 0 || q_block % k.at("pv_unroll") != 0) return false;
    // Accumulators of a register tile, plus the vectors it loads, within the 32 registers of AVX-512
    // (AVX2 has 16, where the search only finds slower points).
    if (k.at("q_unroll") * k.at("k_unroll") + k.at("k_unroll") > 30) return false;
    if (k.count("proj_rows") && k.at("proj_rows") * k.at("proj_cols") + k.at("proj_cols") > 30) return false;
    return true;
}

SchedulePoint SearchSpace::repair(SchedulePoint p, std::mt19937_64& rng) const {
    // Resample the offending knobs until the point is admissible (the defaults always are).
    for (int attempt = 0; attempt < 64 && !admissible(p); ++attempt) {
        const auto& ranges = knobs(p.strategy);
        const bool tile_ok = p.knobs.at("q_unroll") * p.knobs.at("k_unroll") + p.knobs.at("k_unroll") <= 30;
        if (!tile_ok) p.knobs["k_unroll"] = pick(find(ranges, "k_unroll")->values, rng);
        if (p.knobs.count("proj_rows") && p.knobs.at("proj_rows") * p.knobs.at("proj_cols") + p.knobs.at("proj_cols") > 30)
            p.knobs["proj_cols"] = pick(find(ranges, "proj_cols")->values, rng);
        const int qb = p.knobs.at("q_block");
        if (qb % p.knobs.at("q_unroll") != 0 || qb % p.knobs.at("pv_unroll") != 0) {
            // The smallest q_block in range that both unrolls divide, else a new q_unroll.
            bool fixed = false;
            for (int v : find(ranges, "q_block")->values)
                if (v >= qb && v % p.knobs.at("q_unroll") == 0 && v % p.knobs.at("pv_unroll") == 0) {
                    p.knobs["q_block"] = v;
                    fixed = true;
                    break;
                }
            if (!fixed) p.knobs["q_unroll"] = pick(find(ranges, "q_unroll")->values, rng);
        }
    }
    return admissible(p) ? p : default_point(p.strategy);
}

std::string SearchSpace::describe() const {
    std::string s;
    for (const std::string strategy : {"materialized", "streaming"}) {
        s += fmt::format("  {}:\n", strategy);
        for (const auto& r : knobs(strategy)) {
            std::string values;
            for (int v : r.values) values += (values.empty() ? "" : ",") + std::to_string(v);
            s += fmt::format("    {:<13} {{{}}}  {}\n", r.name, values, r.description);
        }
    }
    return s;
}

}  // namespace attnforge::tune
