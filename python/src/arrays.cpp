#include "arrays.hpp"

#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/errors.hpp>
#include <attnforge/runtime/input_conversion.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <nanobind/stl/string.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace attnforge::python {

namespace {

using nb::dlpack::dtype_code;

using runtime::GivenType;

GivenType classify(nb::dlpack::dtype t) {
    if (t.lanes != 1) return GivenType::other;
    const auto code = static_cast<dtype_code>(t.code);
    if (code == dtype_code::Float && t.bits == 32) return GivenType::float32;
    if (code == dtype_code::Float && t.bits == 64) return GivenType::float64;
    if (code == dtype_code::Float && t.bits == 16) return GivenType::float16;
    if (code == dtype_code::Bfloat && t.bits == 16) return GivenType::bfloat16;
    if (code == dtype_code::Bool && t.bits == 8) return GivenType::boolean;
    if (code == dtype_code::UInt && t.bits == 8) return GivenType::uint8;
    if (code == dtype_code::Int && t.bits == 8) return GivenType::int8;
    if (code == dtype_code::Int && t.bits == 32) return GivenType::int32;
    if (code == dtype_code::Int && t.bits == 64) return GivenType::int64;
    return GivenType::other;
}

// The name NumPy and torch give a type (as in the messages).
std::string type_name(GivenType t) {
    switch (t) {
        case GivenType::float32: return "float32";
        case GivenType::float64: return "float64";
        case GivenType::float16: return "float16";
        case GivenType::bfloat16: return "bfloat16";
        case GivenType::boolean: return "bool";
        case GivenType::uint8: return "uint8";
        case GivenType::int8: return "int8";
        case GivenType::int32: return "int32";
        case GivenType::int64: return "int64";
        default: return "";
    }
}

std::string given_name(nb::dlpack::dtype t) {
    if (const GivenType g = classify(t); g != GivenType::other) return type_name(g);
    const char* kinds[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    const std::string kind = t.code < 7 ? kinds[t.code] : "code " + std::to_string(t.code);
    return kind + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

// Visits every element of a (possibly strided) array in row-major order: f(index, pointer).
template <class F>
void for_each_element(const nb::ndarray<nb::ro>& a, F&& f) {
    const std::size_t ndim = a.ndim();
    const std::size_t item = a.itemsize();
    std::vector<std::int64_t> index(ndim, 0);
    const auto* base = static_cast<const std::uint8_t*>(a.data());
    const std::size_t n = a.size();
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t offset = 0;
        for (std::size_t d = 0; d < ndim; ++d) offset += index[d] * a.stride(d);
        f(i, base + offset * static_cast<std::int64_t>(item));
        for (std::size_t d = ndim; d-- > 0;) {
            if (++index[d] < static_cast<std::int64_t>(a.shape(d))) break;
            index[d] = 0;
        }
    }
}

template <class Array>
std::vector<std::int64_t> strides_of(const Array& a) {
    std::vector<std::int64_t> strides(a.ndim());
    for (std::size_t d = 0; d < a.ndim(); ++d) strides[d] = static_cast<std::int64_t>(a.stride(d));
    return strides;
}

template <class Array>
bool c_contiguous(const Array& a) {
    std::int64_t expected = 1;
    for (std::size_t d = a.ndim(); d-- > 0;) {
        if (a.shape(d) != 1 && a.stride(d) != expected) return false;
        expected *= static_cast<std::int64_t>(a.shape(d));
    }
    return true;
}

std::string type_name_of(nb::handle object) {
    return nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(object.ptr()))).attr("__name__")));
}

void* allocate(std::size_t bytes) {
    // 64-byte aligned (a cache line, an AVX-512 vector), at least one line so that empty results have memory.
    const std::size_t size = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
    void* p = std::aligned_alloc(64, size);
    if (!p) throw std::bad_alloc();
    return p;
}

nb::dlpack::dtype export_dtype(dsl::element_type t) {
    switch (t) {
        case dsl::element_type::bfloat16: return {static_cast<std::uint8_t>(dtype_code::Bfloat), 16, 1};
        case dsl::element_type::float16: return {static_cast<std::uint8_t>(dtype_code::Float), 16, 1};
        default: return nb::dtype<float>();
    }
}

nb::object export_array(void* data, const std::vector<std::int64_t>& shape, nb::dlpack::dtype dtype,
                         nb::capsule owner, bool torch) {
    std::vector<std::size_t> dims(shape.begin(), shape.end());
    if (torch)
        return nb::ndarray<nb::pytorch>(data, dims.size(), dims.data(), owner, nullptr, dtype).cast();
    return nb::ndarray<nb::numpy>(data, dims.size(), dims.data(), owner, nullptr, dtype).cast();
}

}  // namespace

bool is_torch(nb::handle object) {
    nb::handle type(reinterpret_cast<PyObject*>(Py_TYPE(object.ptr())));
    if (!nb::hasattr(type, "__module__")) return false;
    const std::string module = nb::cast<std::string>(nb::str(type.attr("__module__")));
    return module == "torch" || module.rfind("torch.", 0) == 0;
}

nb::ndarray<nb::ro> import_array(const std::string& variant, const dsl::tensor_spec& spec, nb::handle object) {
    const std::string what = "input '" + spec.name + "'";
    nb::ndarray<nb::ro> array;
    // A number for a rank-0 input (a scale, a window): a 0-d float32 or int32 array of it.
    nb::object number;
    if (spec.dims.empty() && (nb::isinstance<nb::float_>(object) || nb::isinstance<nb::int_>(object))) {
        number = nb::module_::import_("numpy").attr("asarray")(
            object, nb::arg("dtype") = spec.dtype == dsl::element_type::int32 ? "int32" : "float32");
        object = number;
    }
    if (!nb::try_cast(object, array, false))
        throw input_error(variant + ": " + what + " must be an array (a NumPy array, a torch tensor or another " +
                          "DLPack or buffer-protocol object), given " + type_name_of(object));
    if (array.device_type() != nb::device::cpu::value)
        throw input_error(variant + ": " + what + " must be in CPU memory, given an array on device type " +
                          std::to_string(array.device_type()));
    return array;
}

BorrowedInput borrow_input(const std::string& variant, const dsl::tensor_spec& spec, nb::ndarray<nb::ro> array,
                           dsl::element_type storage) {
    const std::string what = "input '" + spec.name + "'";
    BorrowedInput in;
    in.array = std::move(array);
    in.view.shape.resize(in.array.ndim());
    for (std::size_t d = 0; d < in.array.ndim(); ++d) in.view.shape[d] = static_cast<std::int64_t>(in.array.shape(d));

    const dsl::element_type expected = spec.dtype == dsl::element_type::float32 ? storage : spec.dtype;
    in.view.dtype = expected;
    const GivenType given = classify(in.array.dtype());
    if (given == runtime::given_type_of(expected)) {
        // In place: C-contiguous, or a strided view a kernel reads through its strides (a transposed torch tensor,
        // an expanded mask), rows of the last axis contiguous.
        std::vector<std::int64_t> strides = strides_of(in.array);
        if (c_contiguous(in.array) || runtime::stride_problem(in.view.shape, strides, false).empty()) {
            if (!c_contiguous(in.array)) in.view.strides = std::move(strides);
            in.view.data = in.array.data();
            in.zero_copy = true;
            return in;
        }
    }

    // Converted (or made contiguous) by the rules of docs/contract.md §4 (runtime/input_conversion.hpp).
    if (!runtime::takes(expected, given))
        throw input_error(variant + ": " + what + " must be " + runtime::taken_text(expected, type_name) +
                          ", given " + given_name(in.array.dtype()));
    if (given == GivenType::float64 && dsl::spec_of(expected).storage) {
        const std::string warning = "attnforge: input '" + spec.name + "' is float64; converting to float32";
        if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw nb::python_error();
    }
    const std::size_t n = in.array.size();
    in.converted.resize(std::max<std::size_t>(n, 1) * runtime::item_bytes(expected));
    std::uint8_t* out = in.converted.data();
    const std::string where = variant + ": " + what;
    if (c_contiguous(in.array))
        runtime::convert_elements(static_cast<const std::uint8_t*>(in.array.data()), given, n, expected, out, where);
    else
        for_each_element(in.array, [&](std::size_t i, const std::uint8_t* p) {
            runtime::convert_element(p, given, expected, out, i, where);
        });
    in.view.data = out;
    return in;
}

dsl::element_type storage_implied_by(const nb::ndarray<nb::ro>& array) {
    const GivenType g = classify(array.dtype());
    return g == GivenType::bfloat16  ? dsl::element_type::bfloat16
           : g == GivenType::float16 ? dsl::element_type::float16
                                     : dsl::element_type::float32;
}

ResultArray::ResultArray(std::vector<std::int64_t> shape, dsl::element_type dtype, bool torch)
    : shape_(std::move(shape)), dtype_(dtype), torch_(torch) {
    data_ = allocate(static_cast<std::size_t>(dsl::element_count(shape_)) * runtime::item_bytes(dtype_));
    owner_ = nb::capsule(data_, [](void* p) noexcept { std::free(p); });
}

runtime::OutputView ResultArray::output() const {
    return {shape_, dtype_, data_};
}

nb::object ResultArray::release() {
    if (dtype_ == dsl::element_type::bfloat16 && !torch_) {
        // NumPy has no bf16: the values as float32 (exact).
        const auto n = static_cast<std::size_t>(dsl::element_count(shape_));
        auto* f = static_cast<float*>(allocate(n * 4));
        nb::capsule owner(f, [](void* p) noexcept { std::free(p); });
        const auto* b = static_cast<const std::uint16_t*>(data_);
        for (std::size_t i = 0; i < n; ++i) f[i] = runtime::float_from_bf16(b[i]);
        return export_array(f, shape_, nb::dtype<float>(), owner, false);
    }
    return export_array(data_, shape_, export_dtype(dtype_), owner_, torch_);
}

runtime::OutputView borrow_output(nb::handle out, const std::vector<std::int64_t>& shape, dsl::element_type dtype,
                                  const std::string& kernel_name, nb::ndarray<>& keep) {
    const std::string expected = std::string(dsl::element_type_name(dtype)) + " " + dsl::shape_string(shape);
    if (!nb::try_cast(out, keep, false))
        throw input_error("out= of " + kernel_name + " must be a writable array (" + expected + "), given " +
                          type_name_of(out));
    std::vector<std::int64_t> given_shape(keep.ndim());
    for (std::size_t d = 0; d < keep.ndim(); ++d) given_shape[d] = static_cast<std::int64_t>(keep.shape(d));
    const std::string given = given_name(keep.dtype()) + " " + dsl::shape_string(given_shape);
    // C-contiguous, or a view written through its strides (a (B, Lq, H, E) tensor transposed to the result's
    // (B, H, Lq, E)): rows of the last axis contiguous, no element twice.
    std::vector<std::int64_t> strides = strides_of(keep);
    const std::string problem = c_contiguous(keep) ? "" : runtime::stride_problem(shape, strides, true);
    if (keep.device_type() != nb::device::cpu::value || classify(keep.dtype()) != runtime::given_type_of(dtype) ||
        given_shape != shape || !problem.empty())
        throw input_error("out= of " + kernel_name + ": expected a CPU array " + expected +
                          " (C-contiguous, or a view with contiguous rows), given " + given +
                          (problem.empty() ? "" : " (" + problem + ")"));
    if (c_contiguous(keep)) strides.clear();
    return {shape, dtype, keep.data(), std::move(strides)};
}

namespace {
std::vector<std::int64_t> shape_of_array(const nb::ndarray<nb::ro>& a) {
    std::vector<std::int64_t> shape(a.ndim());
    for (std::size_t d = 0; d < a.ndim(); ++d) shape[d] = static_cast<std::int64_t>(a.shape(d));
    return shape;
}
}  // namespace

runtime::TensorView array_view(nb::handle object, const std::string& what,
                               const std::vector<dsl::element_type>& allowed, nb::ndarray<nb::ro>& keep) {
    std::string names;
    for (dsl::element_type t : allowed) names += (names.empty() ? "" : " or ") + std::string(dsl::element_type_name(t));
    if (!nb::try_cast(object, keep, false) || keep.device_type() != nb::device::cpu::value)
        throw input_error(what + " must be a CPU array (" + names + "), given " + type_name_of(object));
    const std::vector<std::int64_t> shape = shape_of_array(keep);
    for (dsl::element_type t : allowed)
        if (classify(keep.dtype()) == runtime::given_type_of(t)) {
            std::vector<std::int64_t> strides = strides_of(keep);
            if (c_contiguous(keep)) strides.clear();
            return {shape, t, keep.data(), std::move(strides)};
        }
    throw input_error(what + " must be " + names + ", given " + given_name(keep.dtype()) + " " +
                      dsl::shape_string(shape));
}

runtime::OutputView writable_array_view(nb::handle object, const std::string& what, dsl::element_type type,
                                        nb::ndarray<>& keep) {
    const std::string name = dsl::element_type_name(type);
    if (!nb::try_cast(object, keep, false) || keep.device_type() != nb::device::cpu::value)
        throw input_error(what + " must be a writable CPU array of " + name + ", given " + type_name_of(object));
    std::vector<std::int64_t> shape(keep.ndim());
    for (std::size_t d = 0; d < keep.ndim(); ++d) shape[d] = static_cast<std::int64_t>(keep.shape(d));
    if (classify(keep.dtype()) != runtime::given_type_of(type))
        throw input_error(what + " must be " + name + ", given " + given_name(keep.dtype()) + " " +
                          dsl::shape_string(shape));
    std::vector<std::int64_t> strides = strides_of(keep);
    if (c_contiguous(keep)) {
        strides.clear();
    } else if (const std::string problem = runtime::stride_problem(shape, strides, true); !problem.empty()) {
        throw input_error(what + ": " + problem);
    }
    return {shape, type, keep.data(), std::move(strides)};
}

nb::object float64_array(const std::vector<std::int64_t>& shape, const std::vector<double>& values, bool torch) {
    auto* d = static_cast<double*>(allocate(values.size() * 8));
    nb::capsule owner(d, [](void* p) noexcept { std::free(p); });
    if (!values.empty()) std::memcpy(d, values.data(), values.size() * 8);
    return export_array(d, shape, nb::dtype<double>(), owner, torch);
}

}  // namespace attnforge::python
