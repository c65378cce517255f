// softmax takes raw scores; a softmax's output is already probabilities.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto p = softmax<"outer">(softmax(score(variants::sdpa_q, variants::sdpa_k)));
