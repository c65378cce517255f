// The downstream project's own variant, in attnforge's DSL: local attention over 4 static heads of
// width 32 with ALiBi and soft-capped scores (a causal window of 64 keys back).
#pragma once

#include <attnforge/dsl.hpp>

namespace my_project::variants {

using namespace attnforge::dsl;

inline constexpr auto windowed_alibi = [] {
    constexpr auto q = heads_input<"q", 32, "q", 4>();
    constexpr auto k = heads_input<"k", 32, "kv", 4>();
    constexpr auto v = heads_input<"v", 32, "kv", 4>();
    constexpr auto s = modify(modify(score(q, k), alibi<4>()), soft_cap(30.0));
    return make_graph<"windowed_alibi">(weighted_sum(softmax(mask(s, sliding_window(64))), v));
}();

// Every variant the project's generator can generate.
inline constexpr auto all = boost::hana::make_tuple(windowed_alibi);

}  // namespace my_project::variants
