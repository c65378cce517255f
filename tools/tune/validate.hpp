// Validation of candidates, before any is timed: on the small validation problem against the reference
// interpreter (float64), with CONTRACT's bound max |kernel − reference| ≤ 1e-4 · (1 + max |reference|);
// at the tuned size against the default schedule's output, with the same bound.
#pragma once

#include "problem.hpp"

#include <attnforge/runtime/tensor.hpp>

#include <optional>
#include <string>
#include <vector>

namespace attnforge::tune {

// The reference interpreter's result for the problem's synthetic inputs (Workload's values).
std::vector<double> reference_result(const Problem& p, const runtime::TensorMap& inputs);

// Empty when `got` is within the bound of `expected`; otherwise what differs and where (NaN counts as
// a difference).
std::optional<std::string> compare(const std::vector<float>& got, const std::vector<double>& expected);
std::optional<std::string> compare(const std::vector<float>& got, const std::vector<float>& expected);

}  // namespace attnforge::tune
