// One seam between a caller and the two engines that can compute a variant: its generated kernels (by
// the rule) or the float64 reference interpreter that the registry carries for the same graph. Every
// look-up goes through the registry, so a program built with kernels of its own variants
// (attnforge_add_kernel_library) gets them here as well as the built-in ones.
#pragma once

#include <attnforge/runtime/run.hpp>

#include <string_view>

namespace attnforge::runtime {

enum class Engine { kernel, interpreter };

// "kernel" or "interpreter"; anything else is an input_error naming both choices.
Engine parse_engine(std::string_view name);

// The variant's inputs and output; an input_error listing the registered variants when there is none.
const dsl::graph_signature& signature_of(std::string_view variant);
// Its attention weights (B, Hq, Lq, Lk), or null when it has no kernel for them.
const dsl::tensor_spec* attention_weights_of(std::string_view variant);
// The dense flop count of one call at these sizes (dsl::flop_count of its graph).
double flops_of(std::string_view variant, const dsl::FlopSizes& sizes);

// `result` ("output" or "attention_weights") of `variant` on `inputs` by `engine`: the kernel the
// rule picks, or the interpreter (float64, then rounded to float32 as a kernel returns it).
Tensor evaluate(std::string_view variant, const TensorMap& inputs, Engine engine, const RunOptions& options = {});

}  // namespace attnforge::runtime
