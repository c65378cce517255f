// runtime::TensorView: a tensor whose memory the caller owns (row-major, dense), in the kernels' element
// types. The run API calls kernels on views, so that a caller holding its own arrays (the Python module:
// NumPy arrays, torch tensors) passes them without a copy; runtime::Tensor is one owner of such memory
// (view_of). Nothing here allocates or frees the values.
#pragma once

#include <attnforge/dsl/passes/signature.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnforge::runtime {

struct TensorView {
    std::vector<std::int64_t> shape;
    dsl::element_type dtype = dsl::element_type::float32;
    const void* data = nullptr;  // element_count() values of dtype, contiguous

    std::int64_t element_count() const;
    std::size_t item_bytes() const;
    // Value i as a double, whatever the dtype (bf16/fp16 decoded).
    double value(std::size_t i) const;
};

// Where a kernel writes its result: the caller's memory, of the result's shape and dtype (checked).
struct OutputView {
    std::vector<std::int64_t> shape;
    dsl::element_type dtype = dsl::element_type::float32;
    void* data = nullptr;
};

using ViewMap = std::map<std::string, TensorView, std::less<>>;

std::size_t item_bytes(dsl::element_type dtype);
// Value i of `dtype` at `data`, as a double (bf16/fp16 decoded).
double value_at(dsl::element_type dtype, const void* data, std::size_t i);

}  // namespace attnforge::runtime
