// Scaled dot-product attention on given heads, as torch's scaled_dot_product_attention; and causal.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto sdpa = make_graph<"sdpa">(attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale));
inline constexpr auto sdpa_causal = make_graph<"sdpa_causal">(attention(sdpa_q, sdpa_k, sdpa_v, sdpa_scale, causal));

}  // namespace attnforge::dsl::variants
