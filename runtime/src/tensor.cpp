#include <attnforge/errors.hpp>
#include <attnforge/runtime/input_conversion.hpp>
#include <attnforge/runtime/storage_types.hpp>
#include <attnforge/runtime/tensor.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace attnforge::runtime {


Tensor Tensor::float32(std::vector<std::int64_t> shape, std::vector<float> values) {
    Tensor t{std::move(shape), dsl::element_type::float32, std::move(values), {}, {}, {}};
    if (t.f32.empty()) t.f32.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

Tensor Tensor::boolean(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values) {
    Tensor t{std::move(shape), dsl::element_type::boolean, {}, std::move(values), {}, {}};
    if (t.u8.empty()) t.u8.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

Tensor Tensor::int32(std::vector<std::int64_t> shape, std::vector<std::int32_t> values) {
    Tensor t{std::move(shape), dsl::element_type::int32, {}, {}, std::move(values), {}};
    if (t.i32.empty()) t.i32.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

Tensor Tensor::codes(std::vector<std::int64_t> shape, dsl::element_type dtype) {
    if (dtype != dsl::element_type::uint8 && dtype != dsl::element_type::int8)
        throw std::invalid_argument(std::string("Tensor::codes: ") + dsl::element_type_name(dtype) +
                                    " is not a code type (uint8, int8)");
    Tensor t{std::move(shape), dtype, {}, {}, {}, {}};
    t.u8.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

Tensor Tensor::storage16(dsl::element_type dtype, std::vector<std::int64_t> shape) {
    if (dtype != dsl::element_type::bfloat16 && dtype != dsl::element_type::float16)
        throw std::invalid_argument(std::string("Tensor::storage16: ") + dsl::element_type_name(dtype) +
                                    " is not a 16-bit storage type");
    Tensor t;
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.u16.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

std::size_t Tensor::held() const {
    switch (dtype) {
        case dsl::element_type::boolean:
        case dsl::element_type::uint8:
        case dsl::element_type::int8:
            return u8.size();
        case dsl::element_type::int32:
            return i32.size();
        case dsl::element_type::bfloat16:
        case dsl::element_type::float16:
            return u16.size();
        default:
            return f32.size();
    }
}

std::size_t Tensor::item_bytes() const {
    return runtime::item_bytes(dtype);
}

double Tensor::value(std::size_t i) const {
    return value_at(dtype, data(), i);
}

const void* Tensor::data() const {
    switch (dtype) {
        case dsl::element_type::boolean:
        case dsl::element_type::uint8:
        case dsl::element_type::int8:
            return u8.data();
        case dsl::element_type::int32:
            return i32.data();
        case dsl::element_type::bfloat16:
        case dsl::element_type::float16:
            return u16.data();
        default:
            return f32.data();
    }
}

Tensor to_storage(const Tensor& t, dsl::element_type storage) {
    if (t.dtype == storage || !is_storage_type(t.dtype)) return t;
    // The rules of docs/contract.md §4 (input_conversion.hpp): float32 rounded to a 16-bit type, a 16-bit
    // tensor exact in float32, never one 16-bit type re-rounded into the other.
    const GivenType given = given_type_of(t.dtype);
    if (!takes(storage, given))
        throw input_error(std::string("a ") + dsl::element_type_name(t.dtype) + " tensor cannot be stored as " +
                          dsl::element_type_name(storage) + "; give float32 or " + dsl::element_type_name(storage));
    Tensor out = storage == dsl::element_type::float32 ? Tensor::float32(t.shape) : Tensor::storage16(storage, t.shape);
    auto* to = storage == dsl::element_type::float32 ? reinterpret_cast<std::uint8_t*>(out.f32.data())
                                                     : reinterpret_cast<std::uint8_t*>(out.u16.data());
    convert_elements(static_cast<const std::uint8_t*>(t.data()), given, out.held(), storage, to, "");
    return out;
}

Tensor copy_of(const TensorView& v) {
    Tensor t;
    t.shape = v.shape;
    t.dtype = v.dtype;
    const auto n = static_cast<std::size_t>(v.element_count());
    auto copy = [&](auto& values) {
        values.resize(n);
        using T = std::remove_reference_t<decltype(values[0])>;
        if (v.strides.empty()) {
            if (n) std::memcpy(values.data(), v.data, n * sizeof(T));
        } else {  // a strided view: element by element, in row-major order
            for (std::size_t i = 0; i < n; ++i)
                values[i] =
                    static_cast<const T*>(v.data)[strided_offset(v.shape, v.strides, static_cast<std::int64_t>(i))];
        }
    };
    switch (v.dtype) {
        case dsl::element_type::boolean:
        case dsl::element_type::uint8:
        case dsl::element_type::int8: copy(t.u8); break;
        case dsl::element_type::int32: copy(t.i32); break;
        case dsl::element_type::bfloat16:
        case dsl::element_type::float16: copy(t.u16); break;
        default: copy(t.f32);
    }
    return t;
}

TensorMap copies_of(const ViewMap& views) {
    TensorMap out;
    for (const auto& [name, view] : views) out.emplace(name, copy_of(view));
    return out;
}

namespace {
// Parameters (a scale, a cap, ALiBi's slopes) stay as they are: float32 or int32 in every kernel.
bool is_parameter(const dsl::graph_signature& signature, const std::string& name, const Tensor& t) {
    for (const auto& spec : signature.inputs)
        if (spec.name == name) return spec.is_parameter();
    return t.shape.empty();
}
}  // namespace

TensorMap to_storage(const TensorMap& tensors, dsl::element_type storage, const dsl::graph_signature& signature) {
    return to_storage(tensors, storage, "", signature);
}

TensorMap to_storage(const TensorMap& tensors, dsl::element_type storage, std::string_view input_types,
                     const dsl::graph_signature& signature) {
    TensorMap out;
    for (const auto& [name, t] : tensors)
        out.emplace(name, is_parameter(signature, name, t)
                              ? t
                              : to_storage(t, own_input_type(input_types, name).value_or(storage)));
    return out;
}

Tensor to_float32(const Tensor& t) {
    if (t.dtype == dsl::element_type::float32) return t;
    if (!is_storage_type(t.dtype))
        throw std::invalid_argument(std::string("to_float32: a ") + dsl::element_type_name(t.dtype) + " tensor");
    Tensor out = Tensor::float32(t.shape);
    for (std::size_t i = 0; i < out.f32.size(); ++i) out.f32[i] = static_cast<float>(t.value(i));
    return out;
}

std::int64_t Tensor::element_count() const {
    return dsl::element_count(shape);
}

TensorView view_of(const Tensor& t) {
    return {t.shape, t.dtype, t.data()};
}

ViewMap views_of(const TensorMap& tensors) {
    ViewMap out;
    for (const auto& [name, t] : tensors) out.emplace(name, view_of(t));
    return out;
}

OutputView output_view_of(Tensor& t) {
    return {t.shape, t.dtype, const_cast<void*>(t.data())};
}

}  // namespace attnforge::runtime
