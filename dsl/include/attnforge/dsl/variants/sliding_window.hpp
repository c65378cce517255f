// Sliding-window (local) attention: causal, and each query sees itself and at most `window` keys back, as
// FlexAttention's sliding_window_causal. The window is a run-time input (int32, shape ()), 128 where a call gives
// none (Mistral's 4096, Gemma-2's 4096: the call's); H, Hkv, E and the scale as sdpa's. Streaming kernels bound the
// window's predicate per block of pairs with the call's window and skip the key blocks outside the band.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto window_length = scalar_index<"window", 128>();

inline constexpr auto sliding_window_attention = make_graph<"sliding_window_attention">(
    attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, sliding_window(window_length)));

}  // namespace attnforge::dsl::variants
