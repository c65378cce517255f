#include <attnforge/catalogue/schedule_point.hpp>

#include <sstream>
#include <stdexcept>

namespace attnforge::catalogue {

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

std::map<std::string, int> parse_knob_values(std::string_view text) {
    std::map<std::string, int> knobs;
    std::istringstream in{std::string(text)};
    std::string word;
    while (in >> word) {
        const auto eq = word.find('=');
        if (eq == std::string::npos || eq == 0)
            throw std::runtime_error("bad knob '" + word + "' (expected name=value)");
        try {
            std::size_t used = 0;
            const std::string value = word.substr(eq + 1);
            knobs[word.substr(0, eq)] = std::stoi(value, &used);
            if (used != value.size()) throw std::invalid_argument(value);
        } catch (const std::logic_error&) {
            throw std::runtime_error("bad knob value in '" + word + "' (expected an integer)");
        }
    }
    return knobs;
}

}  // namespace attnforge::catalogue
