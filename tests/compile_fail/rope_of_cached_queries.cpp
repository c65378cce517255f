// rope(q) rotates by the index 0..Lq-1, but under kv_cache the queries sit at their cache positions.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto q = heads_input<"q", 64>();
constexpr auto k = heads_input<"k", 64, "kv">();
constexpr auto len = cache_lengths<"kv_length", "kv">();
const auto pattern = match_attention(softmax(mask(score(rope(q), k), kv_cache(len))));
