// ALiBi (Press et al.): a score modifier of (score, h, q_idx, kv_idx), score − slope_h · |q_idx − kv_idx|. The slopes
// are a run-time input (H) float32, a model's own or, where a call gives none, 2^(−8(h+1)/H) for its H (the paper's
// for H a power of two); H and Hkv at run time, E = 64.
#pragma once

#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto alibi_attention =
    make_graph<"alibi_attention">(weighted_sum(softmax(modify(score(q64, k64), alibi(alibi_slopes()))), v64));

}  // namespace attnforge::dsl::variants
