// What run() and a bound kernel share: the caller's keyword arguments as the run API's views, and one
// kernel call with the GIL released.
#pragma once

#include "arrays.hpp"

#include <attnforge/runtime/run.hpp>

#include <map>
#include <optional>
#include <string>

namespace attnforge::python {

struct Inputs {
    std::map<std::string, BorrowedInput> held;  // by name; owns the views' memory (stable addresses)
    runtime::ViewMap views;
    dsl::element_type storage = dsl::element_type::float32;  // the kernels' storage type
    std::string input_types;  // inputs kept in types of their own, "k=bf16 v=bf16" (KernelEntry::input_types)
    bool torch = false;  // any input a torch tensor: results go back as torch tensors
};

// Every keyword argument as an input of `variant`, each array imported once; a name it does not take is an
// input_error listing the ones it does (the CLI's message). Missing inputs and shapes are the run API's to
// check. Float inputs given in several types for which the build has a kernel of `result` taking exactly those
// (q float32, k and v bf16: KernelEntry::input_types) are kept in their types, for that kernel. Else the storage
// type is `storage`, or, without one (dtype=None), the one the float inputs imply (an input_error when they
// disagree), and every float input is converted to it.
Inputs borrow_inputs(const std::string& variant, const dsl::graph_signature& signature, const nb::kwargs& given,
                     std::optional<dsl::element_type> storage, std::string_view result = "");

// dtype= as a storage type (None: implied by the inputs).
std::optional<dsl::element_type> storage_asked(const std::optional<std::string>& dtype);

// Calls `kernel` with the GIL released (other Python threads run meanwhile; the caller's arrays stay
// referenced by `inputs`). An empty key sequence, which no kernel can read, gets the interpreter's answer
// (fully masked rows: zeros), as the CLI's kernel engine gives.
void call_kernel(const runtime::KernelEntry& kernel, const Inputs& inputs, const runtime::OutputView& out,
                 const runtime::RunOptions& options);

runtime::RunOptions run_options(const std::optional<int>& threads, const std::string& result,
                                dsl::element_type storage);

}  // namespace attnforge::python
