// Q heads have width 64, K heads 32.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto s = score(heads_input<"q", 64>(), heads_input<"k", 32>());
