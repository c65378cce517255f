// A mask predicate may only read indices; this one returns a number, not a condition.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto s = mask(score(variants::sdpa_q, variants::sdpa_k),
                        predicate([](auto, auto, auto q_idx, auto kv_idx) { return q_idx - kv_idx; }));
