// Sliding-window (local) attention: causal, and each query sees itself and at most 128 keys back, as
// FlexAttention's sliding_window_causal. Kernels skip the key blocks outside the band.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto sliding_window_attention =
    make_graph<"sliding_window_attention">(attention(q64, k64, v64, sliding_window(128)));

}  // namespace attnforge::dsl::variants
