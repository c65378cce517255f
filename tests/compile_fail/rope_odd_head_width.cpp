// Rotary embedding of heads of odd width 3: its pairs of columns cannot cover the head.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto g = rope(heads_input<"q", 3>());
