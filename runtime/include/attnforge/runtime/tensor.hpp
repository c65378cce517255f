// runtime::Tensor: a host tensor in the kernels' element types (float32, or uint8 for boolean masks).
#pragma once

#include <attnforge/dsl/passes/bind_shapes.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnforge::runtime {

struct Tensor {
    std::vector<std::int64_t> shape;
    dsl::element_type dtype = dsl::element_type::float32;
    std::vector<float> f32;        // the values, when dtype is float32
    std::vector<std::uint8_t> u8;  // the values (0 or 1), when dtype is boolean

    static Tensor float32(std::vector<std::int64_t> shape, std::vector<float> values = {});
    static Tensor boolean(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values = {});

    std::int64_t element_count() const;
    const void* data() const {
        return dtype == dsl::element_type::boolean ? static_cast<const void*>(u8.data()) : f32.data();
    }
};

using TensorMap = std::map<std::string, Tensor, std::less<>>;

}  // namespace attnforge::runtime
