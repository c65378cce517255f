// One seam between a caller and the two engines that can compute a variant: its generated kernels (by
// the rule) or the float64 reference interpreter (reference.hpp). Every look-up goes through the
// registries, so a program built with kernels of its own variants (attnforge_add_kernel_library) gets
// them here as well as the built-in ones. Link attnforge::engine (it adds the interpreter to the
// runtime); the CLI, the tests and the examples do.
#pragma once

#include <attnforge/interp/tensor.hpp>
#include <attnforge/runtime/run.hpp>

#include <string_view>

namespace attnforge::runtime {

enum class Engine { kernel, interpreter };

// "kernel" or "interpreter"; anything else is an input_error naming both choices.
Engine parse_engine(std::string_view name);

// The variant's inputs and output; an input_error listing the registered variants when there is none.
const dsl::graph_signature& signature_of(std::string_view variant);
// What `result` ("output", "attention_weights", "logsumexp") of the variant is, or null when it has no
// kernel for it.
const dsl::tensor_spec* result_spec_of(std::string_view variant, std::string_view result,
                                       std::string_view dtype = "float32");
// Its attention weights (B, Hq, Lq, Lk), or null when it has no kernel for them.
const dsl::tensor_spec* attention_weights_of(std::string_view variant);
// The sequences its attention runs over (queries, keys), whether or not it has kernels for its weights: what Lq and
// Lk of a call are ("" where it has no softmax labelled "attention").
dsl::attention_sequences_t attention_sequences_of(std::string_view variant);
// The dense flop count of one call at these sizes (dsl::flop_count of its graph).
double flops_of(std::string_view variant, const dsl::FlopSizes& sizes);

// `result` ("output", "attention_weights" or "logsumexp") of `variant` on `inputs` by `engine`: the kernel the
// rule picks (of options.dtype: inputs and result in that storage type), or the interpreter on the same
// inputs (float64, then rounded to float32). Where no
// kernel can run (no keys: runtime::no_keys_error) the kernel engine gives the interpreter's answer,
// which is that of fully masked rows.
Tensor evaluate(std::string_view variant, const TensorMap& inputs, Engine engine, const RunOptions& options = {});

// Kernel `k` on `inputs` into `out` (run_kernel_into); where no kernel can run (no keys: no_keys_error) the
// interpreter's answer, which is that of fully masked rows, rounded to out's type. The one place that answers.
void evaluate_into(const KernelEntry& k, const ViewMap& inputs, const OutputView& out, const RunOptions& options = {});

// The interpreter's answer alone, in float64.
interp::Tensor interpret(std::string_view variant, const TensorMap& inputs, std::string_view result = "output");

}  // namespace attnforge::runtime
