// A schedule: a strategy and the value of every knob it reads, written the way kernel lines and the
// generator take it ("<knob>=<value> ..."). A tuning record's best, a point of the tuner's search space.
#pragma once

#include <attnforge/catalogue/strategies.hpp>

#include <map>
#include <string>
#include <string_view>

namespace attnforge::catalogue {

// Halide's autoschedulers, which schedule the unscheduled pipeline themselves (no knobs).
inline constexpr std::string_view autoschedulers[] = {"adams2019", "mullapudi2016", "li2018"};

inline bool is_autoscheduler(std::string_view strategy) {
    for (std::string_view a : autoschedulers)
        if (a == strategy) return true;
    return false;
}

// "adams2019, mullapudi2016 or li2018", for messages.
inline std::string autoscheduler_names() {
    return std::string(autoschedulers[0]) + ", " + std::string(autoschedulers[1]) + " or " +
           std::string(autoschedulers[2]);
}

struct SchedulePoint {
    // a tuned strategy of the strategy table (strategies.hpp: the schedule library, with knobs) or one of
    // Halide's autoschedulers (on the unscheduled pipeline, no knobs)
    std::string strategy = std::string(spec_of(Strategy::materialized).name);
    std::map<std::string, int> knobs;  // knob name -> value, only the knobs the strategy reads

    bool is_autoscheduler() const { return catalogue::is_autoscheduler(strategy); }
    // "<knob>=<value> ..." (knobs only, sorted by name); empty for autoschedulers
    std::string knob_text() const;
    // "materialized <knob>=<value> ...": a stable identity, used to skip candidates already measured
    std::string key() const;
    bool operator==(const SchedulePoint&) const = default;
};

// "a=2 b=32" -> {a: 2, b: 32}; throws std::runtime_error naming the word
// that is not name=<integer>.
std::map<std::string, int> parse_knob_values(std::string_view text);

}  // namespace attnforge::catalogue
