// Learned relative-position bias (Shaw et al.; T5 without buckets): a table of one learned bias per
// head and clipped distance, relative_bias (H = 8, 2·128 + 1), added to every score:
// score + relative_bias[h, clamp(kv_idx − q_idx, −128, 128) + 128].
#pragma once

#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr int max_relative_distance = 128;
inline constexpr auto relative_bias = weight<"relative_bias", 8, 2 * max_relative_distance + 1>();

inline constexpr auto relative_position_attention = [] {
    constexpr auto q = heads_input<"q", 64, "q", 8>();
    constexpr auto k = heads_input<"k", 64, "kv", 8>();
    constexpr auto v = heads_input<"v", 64, "kv", 8>();
    constexpr auto add_bias = [](auto score, auto, auto h, auto q_idx, auto kv_idx) {
        constexpr int C = max_relative_distance;
        return score + relative_bias(h, ex::min(ex::max(kv_idx - q_idx, -C), C) + C);
    };
    return make_graph<"relative_position_attention">(weighted_sum(softmax(modify(score(q, k), add_bias)), v));
}();

}  // namespace attnforge::dsl::variants
