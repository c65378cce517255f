#include <attnforge/runtime/tensor.hpp>

namespace attnforge::runtime {

Tensor Tensor::float32(std::vector<std::int64_t> shape, std::vector<float> values) {
    Tensor t{std::move(shape), dsl::element_type::float32, std::move(values), {}};
    if (t.f32.empty()) t.f32.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

Tensor Tensor::boolean(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values) {
    Tensor t{std::move(shape), dsl::element_type::boolean, {}, std::move(values)};
    if (t.u8.empty()) t.u8.resize(static_cast<std::size_t>(dsl::element_count(t.shape)));
    return t;
}

std::int64_t Tensor::element_count() const {
    return dsl::element_count(shape);
}

}  // namespace attnforge::runtime
