// runtime::Tensor: a host tensor in the kernels' element types (float32, uint8 for boolean masks, int32
// for index inputs: document ids, cache lengths).
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
    std::vector<std::uint8_t> u8;   // the values (0 or 1), when dtype is boolean
    std::vector<std::int32_t> i32;  // the values, when dtype is int32

    static Tensor float32(std::vector<std::int64_t> shape, std::vector<float> values = {});
    static Tensor boolean(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values = {});
    static Tensor int32(std::vector<std::int64_t> shape, std::vector<std::int32_t> values = {});

    std::int64_t element_count() const;
    // How many values it holds (of its dtype), and their bytes each.
    std::size_t held() const;
    std::size_t item_bytes() const { return dtype == dsl::element_type::boolean ? 1 : 4; }
    // Value i as a double, whatever the dtype.
    double value(std::size_t i) const;
    const void* data() const;
};

using TensorMap = std::map<std::string, Tensor, std::less<>>;

}  // namespace attnforge::runtime
