// What run() and a bound kernel share: the caller's keyword arguments as the run API's views, and one
// kernel call with the GIL released.
#pragma once

#include "arrays.hpp"

#include <attnforge/runtime/run.hpp>

#include <deque>
#include <optional>
#include <string>

namespace attnforge::python {

struct Inputs {
    std::deque<BorrowedInput> held;  // owns the views' memory (stable addresses)
    runtime::ViewMap views;
    bool torch = false;               // any input a torch tensor: results go back as torch tensors
};

// Every keyword argument as an input of `variant`; a name it does not take is an input_error listing the
// ones it does (the CLI's message). Missing inputs and shapes are the run API's to check.
Inputs borrow_inputs(const std::string& variant, const dsl::graph_signature& signature, const nb::kwargs& given,
                     dsl::element_type storage);

// The storage type asked for (dtype=) or implied by the inputs (None).
dsl::element_type storage_type(const std::optional<std::string>& dtype, const dsl::graph_signature& signature,
                               const nb::kwargs& inputs);

// Calls `kernel` with the GIL released (other Python threads run meanwhile; the caller's arrays stay
// referenced by `inputs`). An empty key sequence, which no kernel can read, gets the interpreter's answer
// (fully masked rows: zeros), as the CLI's kernel engine gives.
void call_kernel(const runtime::KernelEntry& kernel, const Inputs& inputs, const runtime::OutputView& out,
                 const runtime::RunOptions& options);

runtime::RunOptions run_options(const std::optional<int>& threads, const std::string& result,
                                dsl::element_type storage);

}  // namespace attnforge::python
