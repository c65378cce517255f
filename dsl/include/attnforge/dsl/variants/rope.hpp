// Rotary position embedding (RoFormer; LLaMA's rotate-half pairing, base 10000) applied to Q and K,
// then causal attention: a decoder's attention with RoPE.
#pragma once

#include <attnforge/dsl/nodes/rope.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto rope_attention = make_graph<"rope_attention">(attention(rope(q64), rope(k64), v64, causal));

}  // namespace attnforge::dsl::variants
