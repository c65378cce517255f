// torch tensors read and made for the front door's per-call path (torch_attention.hpp): through torch's C++ API
// where attnforge._torch_tensors is built for the torch imported (torch_tensors_aten.cpp), else through their
// own attributes (data_ptr, shape, stride, dtype) and torch.empty. DLPack (nanobind's ndarray, arrays.hpp) costs a
// capsule and torch's Python-level __dlpack__ per tensor, 3-5 µs each, which at decode sizes is a tenth of the
// kernel.
#pragma once

#include <attnforge/dsl/passes/signature.hpp>

#include <cstdint>
#include <nanobind/nanobind.h>
#include <string>
#include <vector>

namespace attnforge::python {

namespace nb = nanobind;

// The torch dtypes the front door knows; `other` is any other (named in messages by torch's repr).
enum class TorchType { float32, bfloat16, float16, boolean, other };

struct TorchTensor {
    nb::handle object;  // borrowed: the caller holds it for the call
    void* data = nullptr;
    std::vector<std::int64_t> shape, strides;  // strides in elements, as torch gives them
    TorchType type = TorchType::other;
    bool requires_grad = false;
};

// Whether `object` is a torch.Tensor (or a subclass).
bool is_torch_tensor(nb::handle object);

// `object`'s metadata, for input `name` of the front door: a torch.Tensor in CPU memory (else an input_error
// saying what was given). The data pointer only where `data` (a tensor of dtype `other` has none read).
TorchTensor read_torch_tensor(nb::handle object, const char* name);

// A tensor's data_ptr().
void* torch_data_ptr(nb::handle tensor);

// The kernels' storage type for a float tensor type (float32, bf16, fp16).
dsl::element_type storage_of(TorchType t);

// torch's name of a dtype, as in its messages ("torch.float32"), from the tensor.
std::string torch_dtype_name(const TorchTensor& t);

// A new, uninitialised, contiguous CPU tensor of a float type (float32 for `boolean`), its data pointer in *data.
nb::object torch_empty(const std::vector<std::int64_t>& shape, TorchType type, void** data);

// torch.is_grad_enabled().
bool torch_grad_enabled();

// Which path reads and makes the tensors: "aten" (attnforge._torch_tensors) or "attributes".
const char* torch_tensor_reader();

}  // namespace attnforge::python
