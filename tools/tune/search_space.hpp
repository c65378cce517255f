// The search space of attnforge tune: per schedule strategy, every knob it reads and the values it may
// take. Ranges are lists (not intervals) so that a neighbour is "the next value in the list", the
// move the evolutionary search makes. Everything here derives from the knob table
// (codegen/include/attnforge/codegen/schedules/knobs.hpp): values, defaults, meanings, admissibility.
#pragma once

#include <attnforge/catalogue/schedule_point.hpp>

#include <map>

#include <random>
#include <string>
#include <vector>

namespace attnforge::tune {

using catalogue::SchedulePoint;

struct KnobRange {
    std::string name;
    std::vector<int> values;  // in increasing order
    std::string description;  // for `attnforge tune --help-knobs` and docs/tuning.md
};

class SearchSpace {
public:
    // strategies: the schedule-library strategies to search (materialized, streaming or both);
    // natural_lanes: the target's float32 vector width (16 with AVX-512, 8 with AVX2);
    // projections: whether the graph has linear projections (else the projection knobs are left out).
    SearchSpace(std::vector<std::string> strategies, int natural_lanes, bool projections = true);

    const std::vector<std::string>& strategies() const { return strategies_; }
    // The knobs a strategy reads, with their ranges.
    const std::vector<KnobRange>& knobs(const std::string& strategy) const;

    // The schedule the build uses when nothing is tuned: the knob table's defaults.
    SchedulePoint default_point(const std::string& strategy) const;
    // A point from outside the search (a record, a journal) made by a build with fewer knobs: the
    // knobs it lacks take their defaults, which is what that build ran (and what the generator runs
    // when a knob is not given), so it compares and recombines with the points searched now.
    SchedulePoint complete(SchedulePoint p) const;
    SchedulePoint random_point(std::mt19937_64& rng) const;
    // One or two knobs moved to a neighbouring value (sometimes a random one), or, when more than one
    // strategy is searched, occasionally the other strategy with the knobs they share kept.
    SchedulePoint mutate(const SchedulePoint& p, std::mt19937_64& rng) const;
    // Knobs combined from two parents of the same strategy.
    SchedulePoint crossover(const SchedulePoint& a, const SchedulePoint& b, std::mt19937_64& rng) const;

    // Whether the knobs go together: every rule of the knob table (codegen::knob_rules) holds.
    bool admissible(const SchedulePoint& p) const;

    // Every knob of every strategy, for the help text.
    std::string describe() const;

private:
    SchedulePoint repair(SchedulePoint p, std::mt19937_64& rng) const;

    std::vector<std::string> strategies_;
    int natural_lanes_;
    std::map<std::string, std::vector<KnobRange>> knobs_;  // per tuned strategy (the strategy table)
};

}  // namespace attnforge::tune
