// Multi-query attention (Shazeer 2019): 8 query heads share one key/value head of width 64, so the
// key/value projections are 512 × 64 and the KV cache is 8 times smaller than mha's.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto mqa =
    make_graph<"mqa">(multi_head_attention<8, 1>(x512, x512, wq, weight<"wk", 512, 64>(), weight<"wv", 512, 64>(), wo));

}  // namespace attnforge::dsl::variants
