// A scale input whose default is 1/sqrt(E) of a run-time E, on heads of static width 64: its default would be of
// another width than the heads it scales.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto g = score(heads_input<"q", 64>(), heads_input<"k", 64, "kv">(), scale_input());
