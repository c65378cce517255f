// Validation of candidates, before any is timed: on the small validation problem against the reference
// interpreter (float64), with the bound of docs/contract.md §5 max |kernel − reference| ≤ 1e-4 · (1 + max |reference|)
// (bf16 5e-3, fp16 2e-3: the interpreter evaluates the same rounded inputs); at the tuned size against the default
// schedule's output, with the same bound.
#pragma once

#include "candidate.hpp"
#include "problem.hpp"
#include "workload.hpp"
#include <attnforge/runtime/tensor.hpp>

#include <optional>
#include <string>
#include <vector>

namespace attnforge::tune {

// The first line of an error message, trimmed (Halide's run-time errors span several lines).
std::string first_line(const std::string& message);

// The reference interpreter's result for the problem's synthetic inputs (Workload's values).
std::vector<double> reference_result(const Problem& p, const runtime::TensorMap& inputs);

// Empty when `got` is within the bound of `expected`; otherwise what differs and where (NaN counts as
// a difference).
// relative: the bound's factor, 1e-4 for float32 (relative_bound gives it per storage type).
std::optional<std::string> compare(const std::vector<float>& got, const std::vector<double>& expected,
                                   double relative = 1e-4);
std::optional<std::string> compare(const std::vector<float>& got, const std::vector<float>& expected,
                                   double relative = 1e-4);
double relative_bound(const std::string& storage);

// Checks candidates for one tuned problem: on its validation problem against the interpreter, then at
// the tuned size against the first candidate it accepted there (the search checks the default first).
class Validator {
public:
    explicit Validator(const Problem& tuned);

    // "ok", or "invalid: <why>" (a run that fails is invalid too). Leaves the tuned-size output in
    // `tuned_workload`, for timing.
    std::string check(const Candidate& c, Workload& tuned_workload);

    const Problem& small_problem() const { return small_problem_; }

private:
    const Problem& tuned_;
    Problem small_problem_;
    Workload small_;
    std::vector<double> small_reference_;
    std::vector<float> tuned_reference_;
};

}  // namespace attnforge::tune
