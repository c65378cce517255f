// D = 512 cannot be split into 7 heads.
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto q = split_heads<7>(linear(variants::x512, variants::wq));
