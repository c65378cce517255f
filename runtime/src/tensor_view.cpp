// TensorView's own functions (tensor_view.hpp): sizes and values of the kernels' element types.
#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/runtime/storage_types.hpp>
#include <attnforge/runtime/tensor_view.hpp>

#include <algorithm>
#include <string>

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
    if (strides.empty()) return value_at(dtype, data, i);
    return value_at(dtype, data,
                    static_cast<std::size_t>(strided_offset(shape, strides, static_cast<std::int64_t>(i))));
}

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t stride = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
        strides[d] = stride;
        stride *= std::max<std::int64_t>(shape[d], 1);
    }
    return strides;
}

std::int64_t strided_offset(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                            std::int64_t i) {
    if (strides.empty()) return i;
    std::int64_t offset = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
        const std::int64_t n = std::max<std::int64_t>(shape[d], 1);
        offset += (i % n) * strides[d];
        i /= n;
    }
    return offset;
}

std::string stride_problem(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                           bool written) {
    if (strides.empty()) return {};
    if (strides.size() != shape.size())
        return std::to_string(strides.size()) + " strides for " + std::to_string(shape.size()) + " axes";
    std::int64_t farthest = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (strides[d] < 0) return "a negative stride (" + std::to_string(strides[d]) + ")";
        if (written && strides[d] == 0 && shape[d] > 1) return "a stride of 0 in a result (its elements would overlap)";
        if (shape[d] > 0) farthest += (shape[d] - 1) * strides[d];
    }
    if (!shape.empty() && shape.back() > 1 && strides.back() != 1)
        return "the last axis's stride is " + std::to_string(strides.back()) + ", not 1 (a row must be contiguous)";
    if (farthest > 2147483647)
        return "its elements span more than 2^31 - 1 elements (a kernel indexes with 32-bit integers)";
    return {};
}

}  // namespace attnforge::runtime
