// Soft-capped scores, cap · tanh(score / cap) as in Gemma 2, then causal. The cap is a run-time input (float32,
// shape ()), 20 where a call gives none (Gemma-2's 50: the call's); H, Hkv, E and the scale as sdpa's.
#pragma once

#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto softcap = scalar_value<"cap", 20>();

inline constexpr auto softcap_attention = make_graph<"softcap_attention">(
    weighted_sum(softmax(mask(modify(score(sdpa_q, sdpa_k, sdpa_scale), soft_cap(softcap)), causal)), sdpa_v));

}  // namespace attnforge::dsl::variants
