// ALiBi (Press et al.): a score modifier of (score, h, q_idx, kv_idx) over 8 static heads,
// score − slope_h · |q_idx − kv_idx|, slope_h = 2^(−8 (h+1) / 8).
#pragma once

#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto alibi_attention = [] {
    constexpr auto q = heads_input<"q", 64, "q", 8>();
    constexpr auto k = heads_input<"k", 64, "kv", 8>();
    constexpr auto v = heads_input<"v", 64, "kv", 8>();
    return make_graph<"alibi_attention">(weighted_sum(softmax(modify(score(q, k), alibi<8>())), v));
}();

}  // namespace attnforge::dsl::variants
