// weighted_sum takes probabilities from a softmax; masked scores are not probabilities.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto o = weighted_sum(mask(score(variants::sdpa_q, variants::sdpa_k), causal), variants::sdpa_v);
