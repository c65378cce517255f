#include "torch_tensors.hpp"

#include "torch_tensors_api.h"
#include <attnforge/errors.hpp>

#include <cstdlib>
#include <cstring>
#include <nanobind/stl/string.h>

namespace attnforge::python {

namespace {

// torch's objects the per-call path uses, looked up once (torch is imported by attnforge.torch before any call)
// and kept for the process: never released, so that nothing touches Python while it shuts down.
struct Torch {
    PyObject* tensor_type;
    PyObject* parameter_type;  // nn.Parameter: torch's C++ API reads it as a Tensor (THPVariable_CheckExact)
    // attnforge._torch_tensors' table (torch_tensors_aten.cpp), where that module is built for this torch and
    // ATTNFORGE_TORCH_TENSORS is not "attributes"; else nullptr: the attributes below.
    const TorchTensorsApi* aten;
    PyObject* empty;
    PyObject* is_grad_enabled;
    PyObject* dtypes[4];      // TorchType's order: float32, bfloat16, float16, bool
    PyObject* dtype_keyword;  // ("dtype",): torch.empty's keyword, for a vectorcall
    PyObject* data_ptr;       // interned attribute names
    PyObject* shape;
    PyObject* stride;
    PyObject* dtype;
    PyObject* requires_grad;
    PyObject* is_cpu;
    PyObject* device;
};

// The table of attnforge._torch_tensors, or nullptr where the module is absent (a build configured without
// torch), built for another torch version than the one imported, or turned off by ATTNFORGE_TORCH_TENSORS=attributes.
const TorchTensorsApi* load_aten(nb::handle torch) {
    const char* choice = std::getenv("ATTNFORGE_TORCH_TENSORS");
    if (choice && std::strcmp(choice, "attributes") == 0) return nullptr;
    PyObject* module = PyImport_ImportModule("attnforge._torch_tensors");
    if (!module) {
        PyErr_Clear();
        return nullptr;
    }
    const nb::object m = nb::steal(module);
    if (!nb::hasattr(m, "torch_version") || !nb::hasattr(m, "api") ||
        !m.attr("torch_version").equal(torch.attr("__version__")))
        return nullptr;
    auto* api = static_cast<const TorchTensorsApi*>(PyCapsule_GetPointer(m.attr("api").ptr(), torch_tensors_capsule));
    if (!api) {
        PyErr_Clear();
        return nullptr;
    }
    // The module stays imported (sys.modules holds it), so the table outlives every call.
    return api->version == torch_tensors_api_version ? api : nullptr;
}

const Torch& torch_objects() {
    static const Torch t = [] {
        nb::module_ torch = nb::module_::import_("torch");
        auto keep = [](nb::object o) { return o.release().ptr(); };
        Torch r{};
        r.tensor_type = keep(torch.attr("Tensor"));
        r.parameter_type = keep(torch.attr("nn").attr("Parameter"));
        r.aten = load_aten(torch);
        r.empty = keep(torch.attr("empty"));
        r.is_grad_enabled = keep(torch.attr("is_grad_enabled"));
        const char* names[] = {"float32", "bfloat16", "float16", "bool"};
        for (int i = 0; i < 4; ++i) r.dtypes[i] = keep(torch.attr(names[i]));
        r.dtype_keyword = keep(nb::make_tuple("dtype"));
        r.data_ptr = PyUnicode_InternFromString("data_ptr");
        r.shape = PyUnicode_InternFromString("shape");
        r.stride = PyUnicode_InternFromString("stride");
        r.dtype = PyUnicode_InternFromString("dtype");
        r.requires_grad = PyUnicode_InternFromString("requires_grad");
        r.is_cpu = PyUnicode_InternFromString("is_cpu");
        r.device = PyUnicode_InternFromString("device");
        return r;
    }();
    return t;
}

nb::object attribute(nb::handle o, PyObject* name) {
    PyObject* r = PyObject_GetAttr(o.ptr(), name);
    if (!r) throw nb::python_error();
    return nb::steal(r);
}

nb::object method(nb::handle o, PyObject* name) {
    PyObject* r = PyObject_CallMethodNoArgs(o.ptr(), name);
    if (!r) throw nb::python_error();
    return nb::steal(r);
}

std::vector<std::int64_t> integers(nb::handle tuple) {
    const Py_ssize_t n = PyTuple_Size(tuple.ptr());  // torch.Size is a tuple
    if (n < 0) throw nb::python_error();
    std::vector<std::int64_t> r(static_cast<std::size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
        r[static_cast<std::size_t>(i)] = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple.ptr(), i));
        if (PyErr_Occurred()) throw nb::python_error();
    }
    return r;
}

std::string repr_text(nb::handle o) {
    return nb::cast<std::string>(nb::repr(o));
}

}  // namespace

bool is_torch_tensor(nb::handle object) {
    // The C-level subtype test: isinstance() would go through torch's metaclass (__instancecheck__), in Python.
    return PyObject_TypeCheck(object.ptr(), reinterpret_cast<PyTypeObject*>(torch_objects().tensor_type)) != 0;
}

TorchTensor read_torch_tensor(nb::handle object, const char* name) {
    const Torch& torch = torch_objects();
    if (!is_torch_tensor(object))
        throw input_error(
            std::string("attnforge: ") + name + " must be a torch.Tensor, got " +
            nb::cast<std::string>(nb::str(nb::handle((PyObject*)Py_TYPE(object.ptr())).attr("__name__"))));
    TorchTensor t;
    t.object = object;
    const PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object.ptr()));
    TorchTensorFacts facts;
    if (torch.aten && (type == torch.tensor_type || type == torch.parameter_type) &&
        torch.aten->read(object.ptr(), &facts) == 1 && facts.is_cpu) {
        t.type = static_cast<TorchType>(facts.type);
        t.shape.assign(facts.shape, facts.shape + facts.rank);
        t.strides.assign(facts.strides, facts.strides + facts.rank);
        t.requires_grad = facts.requires_grad != 0;
        t.data = facts.data;
        return t;
    }
    // A subclass (its attributes may mean something else), a tensor the table does not read, or no table: through
    // the attributes, which also say what is wrong with a tensor off the CPU.
    if (!PyObject_IsTrue(attribute(object, torch.is_cpu).ptr()))
        throw input_error(std::string("attnforge: ") + name + " is on " + repr_text(attribute(object, torch.device)) +
                          "; attnforge's kernels run on the CPU");
    const nb::object dtype = attribute(object, torch.dtype);
    for (int i = 0; i < 4; ++i)
        if (dtype.ptr() == torch.dtypes[i]) t.type = static_cast<TorchType>(i);
    t.shape = integers(attribute(object, torch.shape));
    t.strides = integers(method(object, torch.stride));
    t.requires_grad = PyObject_IsTrue(attribute(object, torch.requires_grad).ptr());
    if (t.type != TorchType::other) t.data = torch_data_ptr(object);
    return t;
}

void* torch_data_ptr(nb::handle tensor) {
    const nb::object pointer = method(tensor, torch_objects().data_ptr);
    void* data = PyLong_AsVoidPtr(pointer.ptr());
    if (PyErr_Occurred()) throw nb::python_error();
    return data;
}

dsl::element_type storage_of(TorchType t) {
    return t == TorchType::bfloat16  ? dsl::element_type::bfloat16
           : t == TorchType::float16 ? dsl::element_type::float16
                                     : dsl::element_type::float32;
}

std::string torch_dtype_name(const TorchTensor& t) {
    return nb::cast<std::string>(nb::str(attribute(t.object, torch_objects().dtype)));
}

nb::object torch_empty(const std::vector<std::int64_t>& shape, TorchType type, void** data) {
    const Torch& torch = torch_objects();
    if (torch.aten && shape.size() <= static_cast<std::size_t>(torch_tensor_max_rank)) {
        PyObject* r = torch.aten->empty(shape.data(), static_cast<int>(shape.size()), static_cast<int>(type), data);
        if (!r) throw nb::python_error();
        return nb::steal(r);
    }
    // torch.empty(n0, n1, ..., dtype=…): the sizes as separate arguments, which torch's argument parser takes
    // faster than one tuple (0.4 of its 1.6-2.1 µs).
    std::vector<nb::object> sizes;
    std::vector<PyObject*> args;
    for (const std::int64_t n : shape) {
        sizes.push_back(nb::steal(PyLong_FromLongLong(n)));
        if (!sizes.back().ptr()) throw nb::python_error();
        args.push_back(sizes.back().ptr());
    }
    args.push_back(torch.dtypes[type == TorchType::boolean || type == TorchType::other ? 0 : static_cast<int>(type)]);
    PyObject* r = PyObject_Vectorcall(torch.empty, args.data(), shape.size(), torch.dtype_keyword);
    if (!r) throw nb::python_error();
    nb::object tensor = nb::steal(r);
    *data = torch_data_ptr(tensor);
    return tensor;
}

bool torch_grad_enabled() {
    if (const TorchTensorsApi* aten = torch_objects().aten) return aten->grad_enabled() != 0;
    PyObject* r = PyObject_CallNoArgs(torch_objects().is_grad_enabled);
    if (!r) throw nb::python_error();
    const bool enabled = r == Py_True;
    Py_DECREF(r);
    return enabled;
}

const char* torch_tensor_reader() {
    return torch_objects().aten ? "aten" : "attributes";
}

}  // namespace attnforge::python
