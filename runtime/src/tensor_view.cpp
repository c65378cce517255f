// TensorView's own functions (tensor_view.hpp): sizes and values of the kernels' element types.
#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/runtime/storage_types.hpp>
#include <attnforge/runtime/tensor_view.hpp>

namespace attnforge::runtime {

double value_at(dsl::element_type dtype, const void* data, std::size_t i) {
    switch (dtype) {
        case dsl::element_type::boolean:
        case dsl::element_type::uint8:
            return static_cast<const std::uint8_t*>(data)[i];
        case dsl::element_type::int8:
            return static_cast<const std::int8_t*>(data)[i];
        case dsl::element_type::int32:
            return static_cast<const std::int32_t*>(data)[i];
        case dsl::element_type::bfloat16:
            return float_from_bf16(static_cast<const std::uint16_t*>(data)[i]);
        case dsl::element_type::float16:
            return float_from_fp16(static_cast<const std::uint16_t*>(data)[i]);
        default:
            return static_cast<const float*>(data)[i];
    }
}

std::size_t item_bytes(dsl::element_type dtype) {
    return dsl::spec_of(dtype).bytes;
}

std::int64_t TensorView::element_count() const {
    return dsl::element_count(shape);
}

std::size_t TensorView::item_bytes() const {
    return runtime::item_bytes(dtype);
}

double TensorView::value(std::size_t i) const {
    return value_at(dtype, data, i);
}

}  // namespace attnforge::runtime
