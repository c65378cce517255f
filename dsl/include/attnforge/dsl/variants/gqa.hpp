// Grouped-query attention: 8 query heads share 2 key/value heads of width 64 (query head h reads
// key/value head h / 4).
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto gqa = make_graph<"gqa">(
    multi_head_attention<8, 2>(x512, x512, wq, weight<"wk", 512, 128>(), weight<"wv", 512, 128>(), wo));

}  // namespace attnforge::dsl::variants
