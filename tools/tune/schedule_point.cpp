#include "schedule_point.hpp"

namespace attnforge::tune {

std::string SchedulePoint::knob_text() const {
    std::string s;
    for (const auto& [name, value] : knobs) {
        if (!s.empty()) s += ' ';
        s += name + "=" + std::to_string(value);
    }
    return s;
}

std::string SchedulePoint::key() const {
    const std::string k = knob_text();
    return k.empty() ? strategy : strategy + " " + k;
}

}  // namespace attnforge::tune
