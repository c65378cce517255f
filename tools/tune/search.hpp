// The search of attnforge tune. Every candidate is compiled just in time, validated (validate.hpp),
// then screened with a short timing at the tuned size; the search stops at the budget or trial count;
// the best few, the default and the previous record's best are then timed again in interleaved rounds
// (measure.hpp) and the fastest of that final comparison wins if it beats the default by at least
// min_gain (2%: smaller differences are within this machine's noise), else the default stays. Order:
//   1. the default schedule of each searched strategy (the kernel list's rule for these sizes first),
//   2. the newest matching record's best (what the build runs for these sizes where a record applies),
//   3. Halide's autoschedulers,
//   4. the search proper: "evolutionary" (tournament selection among the fastest valid candidates,
//      mutation to neighbouring knob values and crossover, with some random points to keep exploring)
//      or "random" (uniform points of the search space, for comparison).
// Every evaluated candidate is appended to a journal, so a run stopped by Ctrl-C can be resumed.
#pragma once

#include "machine.hpp"
#include "problem.hpp"
#include "search_space.hpp"

#include <Halide.h>

#include <attnforge/catalogue/strategies.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnforge::tune {

struct SearchOptions {
    int threads = 1;
    std::optional<double> budget_seconds;  // stop starting new candidates when it would run past this
    std::optional<int> max_trials;         // candidates compiled and validated (autoschedulers included)
    std::vector<std::string> strategies = catalogue::general_strategies();
    // the strategy the build's rule picks for these sizes
    std::string rule_strategy = std::string(catalogue::spec_of(catalogue::Strategy::materialized).name);
    std::map<std::string, int> rule_knobs;       // and the knobs its kernel line sets
    std::vector<std::string> autoschedulers = {"mullapudi2016", "li2018", "adams2019"};
    std::uint64_t seed = 1;
    std::string method = "evolutionary";  // or random
    std::optional<SchedulePoint> previous_best;
    std::string journal;     // path; empty: none
    bool resume = false;     // take the journal's trials as already measured
    int finalists = 4;       // fastest screened candidates timed again (plus default and previous best)
    double min_gain = 0.02;  // a schedule replaces the default only when this much faster in the final comparison
};

struct Progress {
    std::string phase;                   // "search" or "final"
    int done = 0;                        // candidates evaluated (search) or finalists timed (final)
    int planned = 0;                     // the trial count when given, else 0 (time-bound)
    double elapsed = 0, remaining = -1;  // seconds; remaining < 0: unknown
    const Trial* last = nullptr;
    const Trial* best = nullptr;  // the fastest valid so far (screen times during the search)
    double default_ms = 0;
};

struct SearchOutcome {
    std::vector<Trial> trials;        // every candidate in evaluation order
    int best = -1;                    // index into trials
    int default_index = -1;           // the kernel list's schedule for these sizes
    int previous_index = -1;          // the newest matching record's best (the build's kernel where one applies)
    std::vector<int> autoschedulers;  // indices of the autoscheduler candidates
    std::vector<int> finalists;       // indices timed in the final comparison
    bool interrupted = false;
    double seconds = 0;
};

// interrupts: incremented by the caller's SIGINT handler; one stops the search (the final comparison
// still runs), two also cut the final comparison short (screen times then decide).
SearchOutcome run_search(const Problem& problem, const Halide::Target& target, const SearchOptions& options,
                         const std::atomic<int>& interrupts, const std::function<void(const Progress&)>& observe);

}  // namespace attnforge::tune
