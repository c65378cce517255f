// Between Python arrays (NumPy, torch, anything with __dlpack__ or the buffer protocol) and the run
// API's views (runtime/tensor_view.hpp): an input is read in place when it is C-contiguous, on the CPU and
// already of the element type the kernel takes; otherwise it is converted by the contract's rules for
// .npy inputs (docs/contract.md §4: float64 → float32 with a warning, uint8 masks, whole-number index
// inputs; float32 → bf16/fp16 rounded to nearest even for a 16-bit kernel) into memory the input keeps.
#pragma once

#include <attnforge/dsl/passes/signature.hpp>
#include <attnforge/runtime/tensor.hpp>
#include <attnforge/runtime/tensor_view.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnforge::python {

namespace nb = nanobind;

// An input as the kernel reads it; holds the caller's array (or the converted copy) for the call.
struct BorrowedInput {
    nb::ndarray<nb::ro> array;             // the caller's memory, kept alive
    std::vector<std::uint8_t> converted;   // the values, when they had to be converted or made contiguous
    runtime::TensorView view;
    bool zero_copy = false;                // the view points into the caller's memory
};

// The caller's object for `spec` of `variant` as an array in CPU memory (no copy). Throws input_error
// (ValueError) saying what was expected and what was given.
nb::ndarray<nb::ro> import_array(const std::string& variant, const dsl::tensor_spec& spec, nb::handle object);

// That array as the kernel of storage type `storage` reads it: in place, or converted.
BorrowedInput borrow_input(const std::string& variant, const dsl::tensor_spec& spec, nb::ndarray<nb::ro> array,
                           dsl::element_type storage);

// The storage type a float input implies on its own: bf16 for bfloat16, fp16 for float16, else float32.
dsl::element_type storage_implied_by(const nb::ndarray<nb::ro>& array);

// `object`, a CPU array of one of `allowed` element types, as a view of its own memory in that type (dense or through
// its strides; no copy, no conversion), for operations outside the kernels (quantize_into_cache): the array is kept in
// `keep`. `what` names it in the input_error (ValueError) that says what was expected and given.
runtime::TensorView array_view(nb::handle object, const std::string& what,
                               const std::vector<dsl::element_type>& allowed, nb::ndarray<nb::ro>& keep);
// The same for an array written in place: it must be writable, of `type`, with contiguous rows and no element twice.
runtime::OutputView writable_array_view(nb::handle object, const std::string& what, dsl::element_type type,
                                        nb::ndarray<>& keep);

// Whether `object` is a torch tensor (results then go back as torch tensors).
bool is_torch(nb::handle object);

// Where a result is written, and how it is handed back.
class ResultArray {
public:
    // Memory for a result of this shape and element type, returned to NumPy or to torch.
    ResultArray(std::vector<std::int64_t> shape, dsl::element_type dtype, bool torch);
    runtime::OutputView output() const;
    // The Python object: NumPy has no bf16, so a bf16 result goes to NumPy as float32 (exact).
    nb::object release();

private:
    std::vector<std::int64_t> shape_;
    dsl::element_type dtype_;
    bool torch_;
    void* data_ = nullptr;
    nb::capsule owner_;
};

// A caller's `out=` array as a view the kernel writes into: C-contiguous, writable, on the CPU, of the
// result's element type (bf16 only from torch) and shape.
runtime::OutputView borrow_output(nb::handle out, const std::vector<std::int64_t>& shape, dsl::element_type dtype,
                                  const std::string& kernel_name, nb::ndarray<>& keep);

// A float64 interpreter answer as a NumPy (or torch) float64 array.
nb::object float64_array(const std::vector<std::int64_t>& shape, const std::vector<double>& values, bool torch);


}  // namespace attnforge::python
