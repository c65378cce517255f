// Cross-attention (seed 001 §7): queries from x (Lq), keys and values from memory (Lk).
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto cross_attention =
    make_graph<"cross_attention">(multi_head_attention<8, 8>(x512, activation<"memory", 512>(), wq, wk, wv, wo));

}  // namespace attnforge::dsl::variants
