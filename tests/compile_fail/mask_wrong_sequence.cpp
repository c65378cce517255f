// A key padding mask over the sequence "memory" applied to self-attention scores over "x".
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto g =
    multi_head_attention<8, 8>(variants::x512, variants::x512, variants::wq, variants::wk, variants::wv, variants::wo,
                               key_padding(key_padding_mask<"memory_padding", "memory">()));
