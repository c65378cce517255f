// runtime::Tensor: a host tensor in the kernels' element types (float32; bf16 or fp16 where a kernel
// stores its tensors in them; uint8 for boolean masks; int32 for index inputs: document ids, cache lengths; uint8 or
// int8 for a quantized cache's codes).
#pragma once

#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/runtime/tensor_view.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnforge::runtime {

struct Tensor {
    std::vector<std::int64_t> shape;
    dsl::element_type dtype = dsl::element_type::float32;
    std::vector<float> f32;        // the values, when dtype is float32
    std::vector<std::uint8_t> u8;   // the values' bytes, when dtype is boolean (0 or 1), uint8 or int8
    std::vector<std::int32_t> i32;  // the values, when dtype is int32
    std::vector<std::uint16_t> u16;  // the values' bits, when dtype is bfloat16 or float16 (storage_types.hpp)

    static Tensor float32(std::vector<std::int64_t> shape, std::vector<float> values = {});
    static Tensor boolean(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values = {});
    static Tensor int32(std::vector<std::int64_t> shape, std::vector<std::int32_t> values = {});
    // A uint8 or int8 tensor of zeros: a quantized cache's codes.
    static Tensor codes(std::vector<std::int64_t> shape, dsl::element_type dtype = dsl::element_type::uint8);
    // A bfloat16 or float16 tensor of zeros.
    static Tensor storage16(dsl::element_type dtype, std::vector<std::int64_t> shape);

    std::int64_t element_count() const;
    // How many values it holds (of its dtype), and their bytes each.
    std::size_t held() const;
    std::size_t item_bytes() const;
    // Value i as a double, whatever the dtype.
    double value(std::size_t i) const;
    const void* data() const;
};

using TensorMap = std::map<std::string, Tensor, std::less<>>;

// Views of a tensor's values (no copy): what the run API calls kernels on.
TensorView view_of(const Tensor& t);
ViewMap views_of(const TensorMap& tensors);
OutputView output_view_of(Tensor& t);

// A float32 tensor in a storage type (float32, bf16, fp16), rounded to nearest even; other tensors
// (masks, index inputs) and tensors already in it unchanged. A bf16 or fp16 tensor given for another
// storage type is an input_error.
Tensor to_storage(const Tensor& t, dsl::element_type storage);
// A graph's inputs in a storage type: its float32 tensors rounded to it; its parameters (a scale, a cap, ALiBi's
// slopes: tensor_spec::is_parameter), masks and index inputs as they are.
TensorMap to_storage(const TensorMap& tensors, dsl::element_type storage, const dsl::graph_signature& signature);
// A tensor of its own holding a view's values (same dtype and shape).
Tensor copy_of(const TensorView& view);
TensorMap copies_of(const ViewMap& views);
// Each float tensor in the type it has in `input_types` ("k=bf16 v=bf16"), the others in `storage`: the inputs
// of a kernel whose inputs are of types of their own (KernelEntry::input_types).
TensorMap to_storage(const TensorMap& tensors, dsl::element_type storage, std::string_view input_types,
                     const dsl::graph_signature& signature);
// The values of a float32, bf16 or fp16 tensor as a float32 tensor (exact).
Tensor to_float32(const Tensor& t);

}  // namespace attnforge::runtime
