// Between .npy files and the engines' tensors, with the contract's dtype rules (docs/contract.md §4).
#pragma once

#include <attnforge/dsl.hpp>
#include <attnforge/interp/tensor.hpp>
#include <attnforge/io/npy.hpp>
#include <attnforge/runtime/tensor.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace attnforge::cli {

// Reads input `name` from `path` as `expected` by the rules of docs/contract.md §4 (runtime/input_conversion.hpp):
// float32 tensors take <f4, <f2 and <f8 (converted with a warning on `warnings`); masks |b1 or |u1 (non-zero =
// true); index inputs <i4, or <f4 or <f8 holding whole numbers. Throws input_error otherwise.
runtime::Tensor load_input(const std::string& name, const std::string& path, dsl::element_type expected,
                           std::ostream& warnings);

// Reads every `--input NAME=FILE.npy` of `variant` (signature `sig`): each name must be an input of
// the variant, given once. Shapes are checked later, by the engine. Throws input_error.
runtime::TensorMap load_inputs(const std::string& variant, const dsl::graph_signature& sig,
                               const std::vector<std::string>& args, std::ostream& warnings);

}  // namespace attnforge::cli
