// Scales per channel of blocks of 128 tokens beside zero points per token: one layout for both, or the zero point of
// a code would be read from another place than its scale.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto k = dequantize(
    quantized_codes<"k", 64, "kv">(),
    channel_values<"k_scale", "kv", runtime_heads, 64, 128, quantization_role::scale>(),
    token_values<"k_zero", "kv", runtime_heads, quantization_role::zero>());
