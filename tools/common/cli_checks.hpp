// Option checks of the tools' command lines (CLI11 validators) with messages a person can act on:
// CLI11's own PositiveNumber said "Value 0 not in range 0.000000 to 1.79e308" for --threads 0.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>

namespace attnforge::cli {

namespace detail {
inline CLI::Validator number_at_least(double least, bool strictly, const std::string& what, const std::string& name) {
    return CLI::Validator(
        [=](std::string& value) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(value.c_str(), &end);
            const bool number = end != value.c_str() && *end == '\0';
            if (number && (strictly ? v > least : v >= least)) return {};
            return "must be " + what + ", given " + value;
        },
        name);
}
}  // namespace detail

inline const CLI::Validator positive = detail::number_at_least(0, true, "a positive number", "POSITIVE");
inline const CLI::Validator non_negative = detail::number_at_least(0, false, "zero or more", "NONNEGATIVE");

}  // namespace attnforge::cli
