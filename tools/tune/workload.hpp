// A problem's inputs (deterministic synthetic values) and an output, with the Halide buffers and the
// argv a just-in-time candidate is called with. Allocated once, reused for every call.
#pragma once

#include "problem.hpp"
#include <attnforge/runtime/halide_buffer.hpp>
#include <attnforge/runtime/tensor.hpp>

#include <vector>

namespace attnforge::tune {

struct Workload {
    explicit Workload(const Problem& p);
    Workload(const Workload&) = delete;
    Workload& operator=(const Workload&) = delete;

    runtime::TensorMap inputs;
    runtime::Tensor output;
    // Halide's argv calling convention (Halide::Callable::call_argv_fast): the JIT user context
    // first (set by the candidate per call), then every input in the graph's order, then the output.
    std::vector<const void*> argv;

private:
    std::vector<std::vector<halide_dimension_t>> dims_;
    std::vector<halide_buffer_t> buffers_;
};

}  // namespace attnforge::tune
