#include <attnforge/runtime/tensor.hpp>

namespace attnforge::runtime {

Tensor Tensor::float32(std::vector<std::int64_t> shape, std::vector<float> values) {
    Tensor t{std::move(shape), dsl::element_type::float32, std::move(values), {}, {}};
    if (t.f32.empty()) t.f32.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

Tensor Tensor::boolean(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values) {
    Tensor t{std::move(shape), dsl::element_type::boolean, {}, std::move(values), {}};
    if (t.u8.empty()) t.u8.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

Tensor Tensor::int32(std::vector<std::int64_t> shape, std::vector<std::int32_t> values) {
    Tensor t{std::move(shape), dsl::element_type::int32, {}, {}, std::move(values)};
    if (t.i32.empty()) t.i32.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

std::size_t Tensor::held() const {
    switch (dtype) {
        case dsl::element_type::boolean:
            return u8.size();
        case dsl::element_type::int32:
            return i32.size();
        default:
            return f32.size();
    }
}

double Tensor::value(std::size_t i) const {
    switch (dtype) {
        case dsl::element_type::boolean:
            return u8[i];
        case dsl::element_type::int32:
            return i32[i];
        default:
            return f32[i];
    }
}

const void* Tensor::data() const {
    switch (dtype) {
        case dsl::element_type::boolean:
            return u8.data();
        case dsl::element_type::int32:
            return i32.data();
        default:
            return f32.data();
    }
}

std::int64_t Tensor::element_count() const {
    return dsl::element_count(shape);
}

}  // namespace attnforge::runtime
