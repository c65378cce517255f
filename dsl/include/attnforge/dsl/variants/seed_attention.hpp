// Seed 004: one sequence x (L, 4), single head of width 3, no output projection.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto seed_attention = [] {
    constexpr auto x = unbatched_activation<"x", 4>();
    constexpr auto q = split_heads<1>(linear(x, weight<"wq", 4, 3>()));
    constexpr auto k = split_heads<1>(linear(x, weight<"wk", 4, 3>()));
    constexpr auto v = split_heads<1>(linear(x, weight<"wv", 4, 3>()));
    return make_graph<"seed_attention">(merge_heads(attention(q, k, v)));
}();

}  // namespace attnforge::dsl::variants
