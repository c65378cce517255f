// 8 query heads cannot share 3 key/value heads.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto q = split_heads<8>(linear(variants::x512, variants::wq));
constexpr auto k = split_heads<3>(linear(variants::x512, weight<"wk", 512, 192>()));
constexpr auto s = score(q, k);
