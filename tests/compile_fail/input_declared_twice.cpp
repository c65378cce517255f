// "x" is declared with width 512 and with width 256 in one graph.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto y = add(variants::x512, linear(activation<"x", 256>(), weight<"w", 256, 512>()));
constexpr auto g = make_graph<"twice">(y);
constexpr auto inputs = collect_inputs(g);
