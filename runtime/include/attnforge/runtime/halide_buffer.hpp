// A halide_buffer_t over a row-major tensor, for calling a Halide pipeline on it: the ahead-of-time
// kernels (run.cpp) and the just-in-time candidates of attnforge tune. Sizes are checked before
// (run.cpp: every extent and stride fits int32).
#pragma once

#include <attnforge/dsl/passes/signature.hpp>

#include <HalideRuntime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace attnforge::runtime {

// Dimensions reversed (Halide's first is the innermost), dense strides or the given ones (in elements, outermost
// first: TensorView::strides); `dims` holds them and must outlive the buffer.
inline halide_buffer_t describe(const void* data, dsl::element_type dtype, const std::vector<std::int64_t>& shape,
                                std::vector<halide_dimension_t>& dims, const std::vector<std::int64_t>& strides = {}) {
    dims.clear();
    std::int32_t stride = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
        const std::int32_t own = strides.empty() ? stride : static_cast<std::int32_t>(strides[d]);
        dims.push_back(halide_dimension_t(0, static_cast<std::int32_t>(shape[d]), own));
        stride *= static_cast<std::int32_t>(std::max<std::int64_t>(shape[d], 1));
    }
    halide_buffer_t b{};
    b.host = static_cast<std::uint8_t*>(const_cast<void*>(data));
    const dsl::element_type_spec& type = dsl::spec_of(dtype);  // the element-type table's Halide type
    b.type = halide_type_t(static_cast<halide_type_code_t>(type.halide_code), static_cast<uint8_t>(type.halide_bits));
    b.dimensions = static_cast<std::int32_t>(dims.size());
    b.dim = dims.data();
    return b;
}

}  // namespace attnforge::runtime
