// Sinusoidal encoding needs an even width.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto h = positional_encoding(activation<"x", 255>());
