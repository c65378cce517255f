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
    const void* data = nullptr;  // element_count() values of dtype, row-major, or where `strides` puts them
    // Elements between neighbours along each axis; empty: row-major and dense. A view of other memory without a copy
    // (a transposed torch tensor: (B, L, H, E) seen as (B, H, L, E)); the last axis's stride must be 1 (a kernel
    // reads rows of E as vectors), the others ≥ 0 (0: repeated along the axis). check_strides says what is wrong.
    std::vector<std::int64_t> strides;

    std::int64_t element_count() const;
    std::size_t item_bytes() const;
    // Value i (in row-major order) as a double, whatever the dtype (bf16/fp16 decoded) and the strides.
    double value(std::size_t i) const;
};

// Where a kernel writes its result: the caller's memory, of the result's shape and dtype (checked), row-major or
// through strides as TensorView's (e.g. a (B, Lq, H, E) buffer seen as the result's (B, H, Lq, E)); a written view
// must not overlap itself (no stride 0).
struct OutputView {
    std::vector<std::int64_t> shape;
    dsl::element_type dtype = dsl::element_type::float32;
    void* data = nullptr;
    std::vector<std::int64_t> strides;
};

// The strides of a dense row-major tensor of `shape`, in elements.
std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape);
// The offset, in elements, of element i (row-major order) of a tensor of `shape` laid out with `strides` (empty:
// dense).
std::int64_t strided_offset(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                            std::int64_t i);
// Why `strides` cannot be a kernel buffer's for `shape` ("" where they can): one per axis, the last 1, none negative,
// none zero where `written`, and the farthest element within 2^31 − 1 elements (Halide indexes with int32).
std::string stride_problem(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                           bool written);

using ViewMap = std::map<std::string, TensorView, std::less<>>;

std::size_t item_bytes(dsl::element_type dtype);
// Value i of `dtype` at `data`, as a double (bf16/fp16 decoded).
double value_at(dsl::element_type dtype, const void* data, std::size_t i);

}  // namespace attnforge::runtime
