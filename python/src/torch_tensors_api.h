// The table of functions attnforge._torch_tensors (torch_tensors_aten.cpp) hands the main extension in a
// PyCapsule: reading a torch tensor's metadata and making one through torch's C++ API (ATen) instead of its
// Python attributes. Plain C types only, so that the two extensions share no C++ ABI: the main extension is
// built without torch's headers, the other against one torch build (torch_tensors.cpp checks its version).
#pragma once

#include <Python.h>
#include <cstdint>

namespace attnforge::python {

inline constexpr int torch_tensors_api_version = 1;
inline constexpr int torch_tensor_max_rank = 8;
inline constexpr const char* torch_tensors_capsule = "attnforge._torch_tensors.api";

// TorchType's order (torch_tensors.hpp): float32, bfloat16, float16, bool, any other.
struct TorchTensorFacts {
    void* data;  // data_ptr(), for the four types above (nullptr for any other)
    std::int64_t shape[torch_tensor_max_rank];
    std::int64_t strides[torch_tensor_max_rank];  // in elements
    int rank;
    int type;
    int is_cpu;
    int requires_grad;
};

struct TorchTensorsApi {
    int version;
    // Reads `tensor`, a torch.Tensor or nn.Parameter (not a subclass: the caller checks the type), into `facts`.
    // 1: read; 0: not read (another layout than strided, a rank above the limit, a tensor without storage: the
    // caller reads it through its attributes, which raise torch's own errors); never raises.
    int (*read)(PyObject* tensor, TorchTensorFacts* facts);
    // A new, uninitialised, contiguous CPU tensor of `type` (0-2; 3 or more: float32), its data pointer in
    // *data; nullptr with a Python exception set on failure.
    PyObject* (*empty)(const std::int64_t* shape, int rank, int type, void** data);
    // torch.is_grad_enabled().
    int (*grad_enabled)();
};

}  // namespace attnforge::python
