// The fp16 conversions of storage_types.hpp, with the FP16 library (Debian libfp16-dev): rounding to nearest
// even, ±∞, NaN and subnormals kept.
#include <attnforge/runtime/storage_types.hpp>

#include <fp16.h>

namespace attnforge::runtime {

std::uint16_t fp16_from_float(float x) {
    return fp16_ieee_from_fp32_value(x);
}

float float_from_fp16(std::uint16_t h) {
    return fp16_ieee_to_fp32_value(h);
}

}  // namespace attnforge::runtime
