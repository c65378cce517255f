// Predicates as users write them, for the tests of their interval analysis (tests/dsl/test_block_classes.cpp,
// on the host; tests/codegen/test_expression_bounds.cpp, inside a kernel): windows, chunks, dilation, global
// tokens, abs/min/max, real arithmetic, reads of inputs.
#pragma once

#include <attnforge/dsl.hpp>

namespace example_predicates {

namespace dsl = attnforge::dsl;
namespace ex = attnforge::dsl::ex;

constexpr auto window = dsl::predicate([](auto, auto, auto q, auto kv) { return kv <= q && q - kv <= 256; });
constexpr auto chunked = dsl::predicate([](auto, auto, auto q, auto kv) {
    using ex::floor;
    return floor(q / 128) == floor(kv / 128);
});
constexpr auto dilated = dsl::predicate([](auto, auto, auto q, auto kv) {
    using ex::floor;
    return kv <= q && floor((q - kv) / 2.0) * 2 == q - kv;
});
constexpr auto global_and_window =
    dsl::predicate([](auto, auto, auto q, auto kv) { return kv < 4 || (kv <= q && q - kv <= 256); });
constexpr auto banded_by_abs = dsl::predicate([](auto, auto, auto q, auto kv) {
    using ex::abs;
    return abs(q - kv) <= 64;
});
constexpr auto real_scaled = dsl::predicate([](auto, auto, auto q, auto kv) { return q * 0.1 - kv * 0.1 <= 25.6; });
constexpr auto clipped = dsl::predicate([](auto, auto, auto q, auto kv) {
    using ex::max;
    using ex::min;
    return min(q, 1000) - max(kv, 10) >= 0 && !(kv > q);
});
constexpr auto documents = dsl::predicate([](auto b, auto, auto q, auto kv) {
    constexpr auto ids = dsl::sequence_values<"document_ids", "x">();
    return ids(b, q) == ids(b, kv);
});

}  // namespace example_predicates
