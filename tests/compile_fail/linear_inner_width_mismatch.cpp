// x has width 512, the weight expects 256 inputs.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto y = linear(variants::x512, weight<"w", 256, 512>());
