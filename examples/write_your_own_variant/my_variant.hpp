// Write your own variant: a cross-attention graph with grouped-query heads, a score modifier and a
// sliding-window predicate, in the DSL. This is the "Writing a graph" snippet of docs/dsl.md; the example's
// CMakeLists.txt generates its kernels with attnforge_add_kernel_library, as a project of its own would.
#pragma once

#include <attnforge/dsl.hpp>

namespace my_variants {

using namespace attnforge::dsl;

constexpr auto x = activation<"x", 512>();                                 // (B, L[x], 512)
constexpr auto mem = activation<"memory", 512>();                          // (B, L[memory], 512)
constexpr auto q = split_heads<8>(linear(x, weight<"wq", 512, 512>()));    // (B, 8, L[x], 64)
constexpr auto k = split_heads<2>(linear(mem, weight<"wk", 512, 128>()));  // (B, 2, L[memory], 64): GQA
constexpr auto v = split_heads<2>(linear(mem, weight<"wv", 512, 128>()));
constexpr auto s = modify(score(q, k),  // Q·Kᵀ/√E, then a modifier
                          [](auto score, auto, auto h, auto, auto) { return score - 0.1 * h; });
constexpr auto p = softmax(
    mask(s, predicate([](auto, auto, auto q_idx, auto kv_idx) { return q_idx - kv_idx <= 128 && kv_idx <= q_idx; })));
inline constexpr auto my_variant =
    make_graph<"my_variant">(linear(merge_heads(weighted_sum(p, v)), weight<"wo", 512, 512>()));

inline constexpr auto all = boost::hana::make_tuple(my_variant);  // what the generator can generate

}  // namespace my_variants
