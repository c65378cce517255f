// Soft-capped scores (cap 20: 20 · tanh(score / 20)), as in Gemma 2, then causal.
#pragma once

#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto softcap_attention =
    make_graph<"softcap_attention">(weighted_sum(softmax(mask(modify(score(q64, k64), soft_cap(20.0)), causal)), v64));

}  // namespace attnforge::dsl::variants
