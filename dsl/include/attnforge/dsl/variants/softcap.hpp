// Soft-capped scores, cap · tanh(score / cap) as in Gemma 2, then causal, within an optional sliding window: Gemma-2's
// attention, its global layers (no window) and its local ones (the window) in one variant. The cap is a run-time
// input (float32, shape ()), 20 where a call gives none (Gemma-2's 50: the call's); the window (int32, shape ()) keeps
// each query's key and at most `window` keys back, 2^30 where a call gives none (no window: further back than any
// sequence). H, Hkv, E and the scale as sdpa's.
#pragma once

#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto softcap = scalar_value<"cap", 20>();
inline constexpr auto optional_window = scalar_index<"window", (1LL << 30)>();

// The soft-capped scores of sdpa's inputs.
inline constexpr auto softcapped_scores = modify(score(sdpa_q, sdpa_k, sdpa_scale), soft_cap(softcap));

inline constexpr auto softcap_attention = make_graph<"softcap_attention">(
    weighted_sum(softmax(mask(softcapped_scores, sliding_window(optional_window))), sdpa_v));

}  // namespace attnforge::dsl::variants
