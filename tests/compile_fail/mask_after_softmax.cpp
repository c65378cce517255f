// Masks apply to raw scores; these are already probabilities.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto p = mask(softmax(score(variants::sdpa_q, variants::sdpa_k)), causal);
