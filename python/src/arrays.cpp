#include "arrays.hpp"

#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/errors.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <nanobind/stl/string.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace attnforge::python {

namespace {

using nb::dlpack::dtype_code;

// The element types a caller's array can come in: the kernels' own and the ones converted on the way.
enum class given_type { float32, float64, float16, bfloat16, boolean, uint8, int8, int32, int64, other };

given_type classify(nb::dlpack::dtype t) {
    if (t.lanes != 1) return given_type::other;
    const auto code = static_cast<dtype_code>(t.code);
    if (code == dtype_code::Float && t.bits == 32) return given_type::float32;
    if (code == dtype_code::Float && t.bits == 64) return given_type::float64;
    if (code == dtype_code::Float && t.bits == 16) return given_type::float16;
    if (code == dtype_code::Bfloat && t.bits == 16) return given_type::bfloat16;
    if (code == dtype_code::Bool && t.bits == 8) return given_type::boolean;
    if (code == dtype_code::UInt && t.bits == 8) return given_type::uint8;
    if (code == dtype_code::Int && t.bits == 8) return given_type::int8;
    if (code == dtype_code::Int && t.bits == 32) return given_type::int32;
    if (code == dtype_code::Int && t.bits == 64) return given_type::int64;
    return given_type::other;
}

std::string given_name(nb::dlpack::dtype t) {
    switch (classify(t)) {
        case given_type::float32: return "float32";
        case given_type::float64: return "float64";
        case given_type::float16: return "float16";
        case given_type::bfloat16: return "bfloat16";
        case given_type::boolean: return "bool";
        case given_type::uint8: return "uint8";
        case given_type::int32: return "int32";
        case given_type::int64: return "int64";
        default: break;
    }
    const char* kinds[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    const std::string kind = t.code < 7 ? kinds[t.code] : "code " + std::to_string(t.code);
    return kind + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

// The given type that is the kernel's element type `t` (read in place when contiguous).
given_type given_for(dsl::element_type t) {
    switch (t) {
        case dsl::element_type::boolean: return given_type::boolean;
        case dsl::element_type::int32: return given_type::int32;
        case dsl::element_type::bfloat16: return given_type::bfloat16;
        case dsl::element_type::float16: return given_type::float16;
        case dsl::element_type::uint8: return given_type::uint8;
        case dsl::element_type::int8: return given_type::int8;
        default: return given_type::float32;
    }
}

double read_value(const std::uint8_t* p, given_type t) {
    switch (t) {
        case given_type::float32: { float v; std::memcpy(&v, p, 4); return v; }
        case given_type::float64: { double v; std::memcpy(&v, p, 8); return v; }
        case given_type::float16: { std::uint16_t v; std::memcpy(&v, p, 2); return runtime::float_from_fp16(v); }
        case given_type::bfloat16: { std::uint16_t v; std::memcpy(&v, p, 2); return runtime::float_from_bf16(v); }
        case given_type::boolean:
        case given_type::uint8: return *p;
        case given_type::int32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
        case given_type::int64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
        default: return 0;
    }
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
    const given_type given = classify(in.array.dtype());
    if (given == given_for(expected) && c_contiguous(in.array)) {
        in.view.data = in.array.data();
        in.zero_copy = true;
        return in;
    }

    // Converted (or made contiguous) by the rules for .npy inputs (docs/contract.md §4).
    const std::size_t n = in.array.size();
    in.converted.resize(std::max<std::size_t>(n, 1) * runtime::item_bytes(expected));
    std::uint8_t* out = in.converted.data();
    const std::string given_text = given_name(in.array.dtype());
    switch (expected) {
        case dsl::element_type::boolean:
            if (given != given_type::boolean && given != given_type::uint8)
                throw input_error(variant + ": " + what + " must be a bool (or uint8) mask, given " + given_text);
            for_each_element(in.array, [&](std::size_t i, const std::uint8_t* p) { out[i] = *p != 0; });
            break;
        case dsl::element_type::uint8:
        case dsl::element_type::int8:
            // Quantized codes: their own type only (never converted from another), made contiguous.
            if (given != given_for(expected))
                throw input_error(variant + ": " + what + " must be " + dsl::element_type_name(expected) + ", given " +
                                  given_text);
            for_each_element(in.array, [&](std::size_t i, const std::uint8_t* p) { out[i] = *p; });
            break;
        case dsl::element_type::int32:
            if (given != given_type::int32 && given != given_type::int64 && given != given_type::float32 &&
                given != given_type::float64)
                throw input_error(variant + ": " + what + " must be int32 (or int64, or float holding whole " +
                                  "numbers), given " + given_text);
            for_each_element(in.array, [&](std::size_t i, const std::uint8_t* p) {
                const std::int32_t x = dsl::index_value(read_value(p, given), variant + ": " + what, i);
                std::memcpy(out + 4 * i, &x, 4);
            });
            break;
        default: {
            // A float tensor: float32 (rounded to a 16-bit storage type), float64 (through float32, as the
            // CLI converts '<f8'), or the storage type itself; a 16-bit type is never re-rounded into the
            // other one.
            const bool is16 = given == given_type::float16 || given == given_type::bfloat16;
            const bool ok = given == given_type::float32 || given == given_type::float64 ||
                            (is16 && (expected == dsl::element_type::float32 || given == given_for(expected)));
            if (!ok)
                throw input_error(variant + ": " + what + " must be " + dsl::element_type_name(expected) +
                                  (expected == dsl::element_type::float32 ? " (or float64, float16, bfloat16)"
                                                                          : " (or float32, float64: rounded)") +
                                  ", given " + given_text);
            if (given == given_type::float64) {
                const std::string warning = "attnforge: input '" + spec.name + "' is float64; converting to float32";
                if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw nb::python_error();
            }
            if (given == given_type::float32 && expected != dsl::element_type::float32 && c_contiguous(in.array)) {
                // The common case (float32 arrays into a 16-bit kernel) in one tight loop: the generic walk
                // below costs ~8 ns an element, as much as the kernel at small sizes.
                const auto* src = static_cast<const float*>(in.array.data());
                auto* dst = reinterpret_cast<std::uint16_t*>(out);
                if (expected == dsl::element_type::bfloat16)
                    for (std::size_t i = 0; i < n; ++i) dst[i] = runtime::bf16_from_float(src[i]);
                else
                    for (std::size_t i = 0; i < n; ++i) dst[i] = runtime::fp16_from_float(src[i]);
                break;
            }
            for_each_element(in.array, [&](std::size_t i, const std::uint8_t* p) {
                const auto v = static_cast<float>(read_value(p, given));
                if (expected == dsl::element_type::float32) {
                    std::memcpy(out + 4 * i, &v, 4);
                } else {
                    const std::uint16_t bits = given == given_for(expected)
                                                   ? *reinterpret_cast<const std::uint16_t*>(p)
                                               : expected == dsl::element_type::bfloat16 ? runtime::bf16_from_float(v)
                                                                                         : runtime::fp16_from_float(v);
                    std::memcpy(out + 2 * i, &bits, 2);
                }
            });
        }
    }
    in.view.data = out;
    return in;
}

dsl::element_type storage_implied_by(const nb::ndarray<nb::ro>& array) {
    const given_type g = classify(array.dtype());
    return g == given_type::bfloat16  ? dsl::element_type::bfloat16
           : g == given_type::float16 ? dsl::element_type::float16
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
    if (keep.device_type() != nb::device::cpu::value || classify(keep.dtype()) != given_for(dtype) ||
        given_shape != shape || !c_contiguous(keep))
        throw input_error("out= of " + kernel_name + ": expected a C-contiguous CPU array " + expected + ", given " +
                          given + (c_contiguous(keep) ? "" : " (not C-contiguous)"));
    return {shape, dtype, keep.data()};
}

nb::object float64_array(const std::vector<std::int64_t>& shape, const std::vector<double>& values, bool torch) {
    auto* d = static_cast<double*>(allocate(values.size() * 8));
    nb::capsule owner(d, [](void* p) noexcept { std::free(p); });
    if (!values.empty()) std::memcpy(d, values.data(), values.size() * 8);
    return export_array(d, shape, nb::dtype<double>(), owner, torch);
}

}  // namespace attnforge::python
