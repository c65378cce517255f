#include <attnforge/runtime/tensor.hpp>

namespace attnforge::runtime {

Tensor Tensor::float32(std::vector<std::int64_t> shape, std::vector<float> values) {
    Tensor t{std::move(shape), dsl::element_type::float32, std::move(values), {}};
    if (t.f32.empty()) t.f32.resize(static_cast<std::size_t>(interp::element_count(t.shape)));
    return t;
}

Tensor Tensor::boolean(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values) {
    Tensor t{std::move(shape), dsl::element_type::boolean, {}, std::move(values)};
    if (t.u8.empty()) t.u8.resize(static_cast<std::size_t>(interp::element_count(t.shape)));
    return t;
}

std::int64_t Tensor::element_count() const {
    return interp::element_count(shape);
}

interp::Tensor to_float64(const Tensor& t) {
    interp::Tensor d(t.shape);
    if (t.dtype == dsl::element_type::boolean)
        for (std::size_t i = 0; i < d.data.size(); ++i) d.data[i] = t.u8[i];
    else
        for (std::size_t i = 0; i < d.data.size(); ++i) d.data[i] = t.f32[i];
    return d;
}

interp::TensorMap to_float64(const TensorMap& tensors) {
    interp::TensorMap out;
    for (const auto& [name, t] : tensors) out.emplace(name, to_float64(t));
    return out;
}

}  // namespace attnforge::runtime
