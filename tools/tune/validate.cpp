#include "validate.hpp"

#include <attnforge/dsl.hpp>
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/runtime/reference.hpp>

#include <fmt/format.h>

#include <cmath>

namespace attnforge::tune {

std::vector<double> reference_result(const Problem& p, const runtime::TensorMap& inputs) {
    std::vector<double> out;
    const interp::TensorMap in = runtime::to_float64(inputs);
    dsl::with_builtin_variant(p.variant, [&](const auto& g) {
        if (p.result == "output")
            out = interp::evaluate(g, in, {.intermediates = false}).output.data;
        else
            out = interp::evaluate(g, in).intermediates.at("attention_weights").data;
    });
    return out;
}

namespace {

template <class T>
std::optional<std::string> compare_values(const std::vector<float>& got, const std::vector<T>& expected,
                                          double relative) {
    if (got.size() != expected.size())
        return fmt::format("{} values where {} were expected", got.size(), expected.size());
    double scale = 0;
    for (T v : expected)
        if (std::isfinite(static_cast<double>(v))) scale = std::max(scale, std::abs(static_cast<double>(v)));
    const double bound = relative * (1 + scale);
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double e = static_cast<double>(expected[i]), g = got[i];
        const double err = (g == e || (std::isnan(e) && std::isnan(g))) ? 0 : std::abs(g - e);
        if (!(err <= worst)) {  // NaN differences win
            worst = err;
            at = i;
            if (std::isnan(err)) break;
        }
    }
    if (worst <= bound) return std::nullopt;
    return fmt::format("max |error| {:.3g} > bound {:.3g} at element {} (got {}, expected {})", worst, bound, at,
                       got[at], static_cast<double>(expected[at]));
}

}  // namespace

std::optional<std::string> compare(const std::vector<float>& got, const std::vector<double>& expected,
                                   double relative) {
    return compare_values(got, expected, relative);
}
std::optional<std::string> compare(const std::vector<float>& got, const std::vector<float>& expected, double relative) {
    return compare_values(got, expected, relative);
}

double relative_bound(const std::string& storage) {
    return storage == "bf16" ? 5e-3 : storage == "fp16" ? 2e-3 : 1e-4;
}

std::string first_line(const std::string& s) {
    std::string line = s.substr(0, s.find('\n'));
    const auto start = line.find_first_not_of(" \t");
    return start == std::string::npos ? "" : line.substr(start);
}

Validator::Validator(const Problem& tuned)
    : tuned_(tuned),
      small_problem_(validation_problem(tuned)),
      small_(small_problem_),
      small_reference_(reference_result(small_problem_, small_.inputs)) {}

std::string Validator::check(const Candidate& c, Workload& w) {
    try {
        c.run(small_);
    } catch (const std::exception& e) {
        return "invalid: fails at the validation size " + small_problem_.describe() + ": " + first_line(e.what());
    }
    const double relative = relative_bound(tuned_.storage);
    if (auto why = compare(runtime::to_float32(small_.output).f32, small_reference_, relative))
        return "invalid: differs from the interpreter at " + small_problem_.describe() + ": " + *why;
    try {
        c.run(w);
    } catch (const std::exception& e) {
        return "invalid: fails at the tuned size: " + first_line(e.what());
    }
    if (tuned_reference_.empty()) {
        tuned_reference_ = runtime::to_float32(w.output).f32;
    } else if (auto why = compare(runtime::to_float32(w.output).f32, tuned_reference_, relative)) {
        return "invalid: differs from the default schedule at " + tuned_.describe() + ": " + *why;
    }
    return "ok";
}

}  // namespace attnforge::tune
