// A point of the search space: a schedule strategy and the value of every knob it reads, written the
// way generated/kernels.list and the generator take it ("strategy=materialized <knob>=<value> ...").
#pragma once

#include <map>
#include <string>

namespace attnforge::tune {

struct SchedulePoint {
    // materialized | streaming (the schedule library, with knobs) or mullapudi2016 | li2018 |
    // adams2019 (Halide's autoschedulers on the unscheduled pipeline, no knobs)
    std::string strategy = "materialized";
    std::map<std::string, int> knobs;  // knob name -> value, only the knobs the strategy reads

    bool is_autoscheduler() const { return strategy != "materialized" && strategy != "streaming"; }
    // "<knob>=<value> ..." (knobs only, sorted by name); empty for autoschedulers
    std::string knob_text() const;
    // "materialized <knob>=<value> ...": a stable identity, used to skip candidates already measured
    std::string key() const;
    bool operator==(const SchedulePoint&) const = default;
};

}  // namespace attnforge::tune
