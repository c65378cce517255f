// .npy files (docs/contract.md §4).
// Read: format versions 1.0-3.0, C order, little-endian; dtypes <f4 (tensors), |b1 or |u1 (masks),
//       <i4 (index inputs: document ids, lengths), <f2 (fp16 kernels' inputs), <f8 (accepted; callers
//       converting it to float32 warn). Everything else is rejected with an
//       attnforge::input_error naming the file, what was expected and what was found.
// Write: version 1.0, <f4, C order.
#pragma once

#include <attnforge/interp/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attnforge::io {

enum class npy_dtype { float32, float64, boolean, uint8, int32, float16, int8 };

// "<f4", "<f8", "|b1", "|u1", "<i4", "<f2", "|i1"
const char* npy_descr(npy_dtype dtype);
// Bytes per element: 8, 4, 2 or 1.
std::size_t npy_item_bytes(npy_dtype dtype);

struct NpyArray {
    std::vector<std::int64_t> shape;
    npy_dtype dtype = npy_dtype::float32;
    std::vector<std::byte> bytes;  // element_count · itemsize bytes, C order, little-endian

    std::int64_t element_count() const { return interp::element_count(shape); }
};

// Parses a whole .npy file held in memory; `source` names it in error messages.
NpyArray parse_npy(std::span<const std::byte> file, const std::string& source);
NpyArray read_npy(const std::string& path);

// Values as float64 (bool and uint8 masks become 0 or 1; int8 codes their value).
interp::Tensor to_tensor(const NpyArray& array);

// Writes `tensor` as float32 (<f4, version 1.0). Writes to a temporary file beside `path` and renames
// it, so a failure never leaves a partial file at `path`.
void write_npy(const std::string& path, const interp::Tensor& tensor);
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const float> values);
// Writes uint8 values as |u1 (version 1.0): a quantized cache's codes (attnforge quantize), the same way.
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const std::uint8_t> codes);
// Writes int8 codes as |i1 (version 1.0), the same way.
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const std::int8_t> codes);

}  // namespace attnforge::io
