// A quantized cache's codes over "kv" with scales per token of the sequence "q": each token's scale must be its own.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto k = dequantize(quantized_codes<"k", 64, "kv">(), token_values<"k_scale", "q">(),
                              token_values<"k_zero", "kv", runtime_heads, quantization_role::zero>());
