// uint8 codes read without a zero point: symmetric codes are int8, uint8 ones take dequantize(codes, scale, zero).
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto k = dequantize(quantized_codes<"k", 64, "kv">(), group_scales<"k_scale", "kv", runtime_heads, 64, 32>());
