// attnforge._torch_tensors: a torch tensor's metadata read, and the output tensor made, through torch's C++ API,
// for the front door's per-call path (torch_tensors.cpp). The Python attributes it replaces cost ~0.2 µs each on
// warm caches and 16-23 µs each inside a model, whose other work evicts their code between calls; here a tensor
// is a C++ object behind its Python one, read in a few loads. Built only where torch is in the .venv when the
// build is configured (python/CMakeLists.txt), against that torch's headers: the module records the version it
// was built against, and the main extension uses it only under that version.
#include "torch_tensors_api.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/python_variable.h>

namespace attnforge::python {

namespace {

int type_of(c10::ScalarType t) {
    switch (t) {
        case c10::ScalarType::Float: return 0;
        case c10::ScalarType::BFloat16: return 1;
        case c10::ScalarType::Half: return 2;
        case c10::ScalarType::Bool: return 3;
        default: return 4;
    }
}

constexpr c10::ScalarType scalar_types[] = {c10::ScalarType::Float, c10::ScalarType::BFloat16, c10::ScalarType::Half};

int read(PyObject* object, TorchTensorFacts* facts) noexcept {
    try {
        const at::Tensor& t = THPVariable_Unpack(object);
        if (!t.defined() || t.layout() != c10::kStrided || !t.has_storage()) return 0;
        const auto rank = t.dim();
        if (rank > torch_tensor_max_rank) return 0;
        facts->rank = static_cast<int>(rank);
        const auto sizes = t.sizes();
        const auto strides = t.strides();
        for (std::int64_t d = 0; d < rank; ++d) {
            facts->shape[d] = sizes[d];
            facts->strides[d] = strides[d];
        }
        facts->type = type_of(t.scalar_type());
        facts->is_cpu = t.is_cpu();
        facts->requires_grad = t.requires_grad();
        facts->data = facts->type < 4 && facts->is_cpu ? t.data_ptr() : nullptr;
        return 1;
    } catch (...) {
        return 0;
    }
}

PyObject* empty(const std::int64_t* shape, int rank, int type, void** data) noexcept {
    try {
        // What torch.empty's CPU kernel makes, without the dispatcher's round trip to it (a tensor made under
        // inference mode is an inference tensor all the same: TensorImpl reads the mode).
        at::TensorBase t = at::detail::empty_cpu(c10::IntArrayRef(shape, static_cast<std::size_t>(rank)),
                                                 scalar_types[type >= 0 && type < 3 ? type : 0]);
        *data = t.data_ptr();
        return THPVariable_Wrap(std::move(t));
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return nullptr;
    }
}

int grad_enabled() noexcept {
    return c10::GradMode::is_enabled();
}

const TorchTensorsApi api{torch_tensors_api_version, read, empty, grad_enabled};

PyModuleDef module{PyModuleDef_HEAD_INIT, "_torch_tensors",
                   "torch tensors read and made through torch's C++ API for attnforge's front door "
                   "(python/src/torch_tensors_aten.cpp)",
                   -1, nullptr, nullptr, nullptr, nullptr, nullptr};

}  // namespace

}  // namespace attnforge::python

PyMODINIT_FUNC PyInit__torch_tensors() {
    using namespace attnforge::python;
    PyObject* m = PyModule_Create(&module);
    if (!m) return nullptr;
    PyObject* capsule = PyCapsule_New(const_cast<TorchTensorsApi*>(&api), torch_tensors_capsule, nullptr);
    if (!capsule || PyModule_AddObject(m, "api", capsule) < 0 ||
        PyModule_AddStringConstant(m, "torch_version", ATTNFORGE_TORCH_VERSION) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return nullptr;
    }
    return m;
}
