// A boolean attention-mask input (B, Lq, Lk): true means the pair takes part (torch's bool attn_mask).
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto masked_attention =
    make_graph<"masked_attention">(attention(q64, k64, v64, boolean_mask(attention_mask<"attn_mask", "q", "kv">())));

}  // namespace attnforge::dsl::variants
