// Running generated kernels: look a variant up, let the rule pick its kernel for the sizes at hand,
// check every input (name, shape, dtype) before touching memory, call it.
//
//     auto y = attnforge::runtime::run("mha", {{"x", x}, {"wq", wq}, ...});
//
// Inputs are owned Tensors or views of the caller's memory (tensor_view.hpp): the view forms read
// and write the caller's arrays in place (the Python module passes NumPy and torch memory this way).
//
// Errors in what the caller gave throw attnforge::input_error naming the input and both shapes.
// Kernels keep their large temporaries for the next call (runtime/scratch_memory.hpp).
#pragma once

#include <attnforge/errors.hpp>
#include <attnforge/runtime/registry.hpp>
#include <attnforge/runtime/storage_types.hpp>
#include <attnforge/runtime/tensor.hpp>

#include <map>
#include <string>

namespace attnforge::runtime {

// An empty key sequence with queries present (Lk = 0): every row is fully masked, and no kernel can
// read its clamped inputs. The reference engine (engine.hpp, Engine::kernel) answers it with the
// interpreter; the runtime alone, which never links the interpreter, throws this.
struct no_keys_error : input_error {
    using input_error::input_error;
};

struct RunOptions {
    std::string_view result = "output";  // or "attention_weights", "logsumexp"
    // Threads for this call, the calling one included (0: the process default, set_default_threads). A call
    // runs on at most this many, and its pool workers only join while a core is free; calls on other
    // threads run at the same time, each on its own count (call_threads.hpp).
    int threads = 0;
    // The storage type of the kernels to run: "float32", "bf16" or "fp16" (docs/contract.md §1). Their
    // float inputs must come in it (to_storage rounds float32 ones), and so does their output (a
    // log-sum-exp is always float32).
    std::string_view dtype = "float32";
};

// Threads every kernel call uses unless RunOptions::threads says otherwise (0: HL_NUM_THREADS if set, else one
// per core; negative: input_error).
void set_default_threads(int threads);

// The registered variants, in list order, each once.
std::vector<std::string_view> variants();

// The kernels registered for (variant, result, storage type, inputs of types of their own: "k=bf16 v=bf16",
// sorted by name; "" for kernels whose float inputs are all of the storage type), in rule order.
std::vector<const KernelEntry*> kernels_for(std::string_view variant, std::string_view result,
                                            std::string_view dtype = "float32", std::string_view input_types = "");

// The element type kernel `k` takes input `spec` in: its own type (KernelEntry::input_types), the kernel's
// storage type for the graph's float32 tensors, or the graph's type (index inputs, masks).
dsl::element_type input_dtype(const KernelEntry& k, const dsl::tensor_spec& spec);

// The float inputs of `inputs` that are not of the storage type `dtype`, as KernelEntry::input_types writes
// them ("k=bf16 v=bf16"): the kernels select_kernel looks among for inputs given in several types.
std::string input_types_of(const dsl::graph_signature& signature, const ViewMap& inputs, std::string_view dtype);

// The first kernel of (variant, result, storage type) in rule order; an input_error naming the
// registered variants when the variant is unknown, or saying it has no kernel for that result or type.
const KernelEntry& first_kernel(std::string_view variant, std::string_view result = "output",
                                std::string_view dtype = "float32");

// The kernel the rule picks for these inputs (the first whose size class holds), after checking them. Inputs
// given in several float types (q float32, k and v bf16) pick among the kernels that take exactly those types
// (input_types_of), the others among the kernels of storage type `dtype`.
const KernelEntry& select_kernel(std::string_view variant, const TensorMap& inputs, std::string_view result = "output",
                                 std::string_view dtype = "float32");
const KernelEntry& select_kernel(std::string_view variant, const ViewMap& inputs, std::string_view result = "output",
                                 std::string_view dtype = "float32");
// The same for sizes known before any input is (a kernel bound once to its sizes, called many times), among
// the kernels of that storage type and those inputs of types of their own (kernels_for).
const KernelEntry& select_kernel(std::string_view variant, const dsl::RuntimeSizes& sizes,
                                 std::string_view result = "output", std::string_view dtype = "float32",
                                 std::string_view input_types = "");

// The shape of what `kernel` writes for these inputs, after checking them (name, shape, dtype, values).
std::vector<std::int64_t> result_shape(const KernelEntry& kernel, const ViewMap& inputs);

// The element type of what a kernel writes: its storage type (float32 for a log-sum-exp).
dsl::element_type result_dtype(const KernelEntry& kernel);
// A tensor of zeros of the shape and element type `kernel` writes for these inputs (after checking them).
Tensor result_tensor(const KernelEntry& kernel, const ViewMap& inputs);

Tensor run(std::string_view variant, const TensorMap& inputs, const RunOptions& options = {});
// Runs one particular kernel (its size class is not consulted).
Tensor run_kernel(const KernelEntry& kernel, const TensorMap& inputs, const RunOptions& options = {});
// The same, writing into `out`, which must already have the result's shape and dtype (result_dtype): for
// callers that call repeatedly (a fresh output is a fresh mapping to page-fault in, every call).
void run_kernel_into(const KernelEntry& kernel, const TensorMap& inputs, Tensor& out, const RunOptions& options = {});
// The same on the caller's memory: no copy of any input or of the result.
void run_kernel_into(const KernelEntry& kernel, const ViewMap& inputs, const OutputView& out,
                     const RunOptions& options = {});

// The host addresses the last kernel call made on this thread handed to the kernel: each input's by its
// name, the result's under "" (empty when that call computed nothing). What the kernel reads, after every
// conversion and borrow on the way in: how callers and tests check that memory is read in place.
std::map<std::string, const void*> last_call_addresses();

}  // namespace attnforge::runtime
