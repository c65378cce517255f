// Soft-capped scores, cap · tanh(score / cap) as in Gemma 2, then causal: Gemma-2's attention.
//   softcap_attention                 its global layers
//   softcap_sliding_window_attention  its local layers: each query sees its key and at most `window` keys back
//                                     (int32, shape (), required); a window predicate in softcap_attention, even
//                                     one that keeps every pair, cost its materialized kernel 7 % at L = 2048
// The cap is a run-time input (float32, shape ()), 20 where a call gives none (Gemma-2's 50: the call's). H, Hkv, E
// and the scale as sdpa's. decode_softcap (variants/decode.hpp) is the decode form of both.
#pragma once

#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto softcap = scalar_value<"cap", 20>();
// A window a call may leave out, and then none: 2^30 keys back is further than any sequence.
inline constexpr auto optional_window = scalar_index<"window", (1LL << 30)>();

// The soft-capped scores of sdpa's inputs.
inline constexpr auto softcapped_scores = modify(score(sdpa_q, sdpa_k, sdpa_scale), soft_cap(softcap));

inline constexpr auto softcap_attention =
    make_graph<"softcap_attention">(weighted_sum(softmax(mask(softcapped_scores, causal)), sdpa_v));

inline constexpr auto softcap_sliding_window_attention = make_graph<"softcap_sliding_window_attention">(
    weighted_sum(softmax(mask(softcapped_scores, sliding_window(scalar_index<"window">()))), sdpa_v));

}  // namespace attnforge::dsl::variants
