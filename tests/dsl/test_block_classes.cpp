// Interval analysis of predicates (dsl/passes/expr_intervals.hpp): blocks of (query, key) pairs classified as
// dead, full or partial from the expression alone, for the masks users write as lambdas (windows, chunks,
// dilation, global tokens, reads of inputs); and never a wrong class: every class checked pair by pair, in real
// arithmetic and as a kernel computes (integers exact, other values rounded to float32 at each operation).
#define BOOST_TEST_MODULE block_classes
#include "example_predicates.hpp"
#include <attnforge/dsl.hpp>
#include <attnforge/dsl/passes/expr_intervals.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <type_traits>

namespace dsl = attnforge::dsl;
namespace ex = attnforge::dsl::ex;
using ex::block_kind;
using namespace example_predicates;

namespace {

// A block: queries [q0, q1] and keys [k0, k1] of batch entry 0, head 0.
ex::interval_env block(double q0, double q1, double k0, double k1) {
    ex::interval_env box;
    box.b = box.h = ex::interval::point(0);
    box.q_idx = ex::interval::range(q0, q1);
    box.kv_idx = ex::interval::range(k0, k1);
    return box;
}

template <class Spec>
block_kind kind_of(const Spec& spec, double q0, double q1, double k0, double k1) {
    return ex::classify_block(spec.expr, block(q0, q1, k0, k1));
}

// One pair's value: in real arithmetic (float32 = false), or as a kernel computes it: integers exact while
// only integers meet, any other value rounded to float32 after each operation (codegen's HalideBackend).
struct value {
    double v;
    bool integer;
};
struct pair_backend {
    bool float32;
    value round(double v, bool integer) const {
        return {integer || !float32 ? v : static_cast<double>(static_cast<float>(v)), integer};
    }
    value constant(double c) const {
        const bool integer = c == std::floor(c) && std::abs(c) < 0x1p30;
        return round(c, integer);
    }
    template <class In, class... I>
    value read(In, const I&...) const {
        return {0, true};
    }
    template <class Op, class... A>
    value call(Op, const A&... a) const {
        namespace op = ex::op;
        const value x[] = {a...};
        const bool ints = (a.integer && ...);
        if constexpr (std::is_same_v<Op, op::add>) return round(x[0].v + x[1].v, ints);
        else if constexpr (std::is_same_v<Op, op::sub>) return round(x[0].v - x[1].v, ints);
        else if constexpr (std::is_same_v<Op, op::mul>) return round(x[0].v * x[1].v, ints);
        else if constexpr (std::is_same_v<Op, op::div>) return round(x[0].v / x[1].v, false);
        else if constexpr (std::is_same_v<Op, op::neg>) return {-x[0].v, x[0].integer};
        else if constexpr (std::is_same_v<Op, op::abs>) return {std::abs(x[0].v), x[0].integer};
        else if constexpr (std::is_same_v<Op, op::min>) return {std::min(x[0].v, x[1].v), ints};
        else if constexpr (std::is_same_v<Op, op::max>) return {std::max(x[0].v, x[1].v), ints};
        else if constexpr (std::is_same_v<Op, op::floor>) return {std::floor(x[0].v), false};
        else if constexpr (std::is_same_v<Op, op::lt>) return {double(x[0].v < x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::le>) return {double(x[0].v <= x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::gt>) return {double(x[0].v > x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::ge>) return {double(x[0].v >= x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::eq>) return {double(x[0].v == x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::ne>) return {double(x[0].v != x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::logical_and>) return {double(x[0].v && x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::logical_or>) return {double(x[0].v || x[1].v), true};
        else if constexpr (std::is_same_v<Op, op::logical_not>) return {double(!x[0].v), true};
        else static_assert(sizeof(Op) == 0, "pair_backend: not used by these predicates");
    }
};
struct pair_env {
    value score, b, h, q_idx, kv_idx;
};

// Every pair of the block agrees with its class, in both arithmetics.
template <class Spec>
void check_pairs(const Spec& spec, int q0, int q1, int k0, int k1, const char* name) {
    const block_kind k = kind_of(spec, q0, q1, k0, k1);
    if (k == block_kind::partial) return;
    for (bool float32 : {false, true})
        for (int q = q0; q <= q1; ++q)
            for (int kv = k0; kv <= k1; ++kv) {
                const pair_env env{{0, false}, {0, true}, {0, true}, {double(q), true}, {double(kv), true}};
                const bool kept = ex::evaluate(spec.expr, env, pair_backend{float32}).v != 0;
                if (kept != (k == block_kind::full)) {
                    BOOST_ERROR(name << ": block q [" << q0 << ", " << q1 << "] k [" << k0 << ", " << k1 << "] is "
                                     << (k == block_kind::full ? "full" : "dead") << " but pair (" << q << ", " << kv
                                     << ") is " << (kept ? "kept" : "masked") << (float32 ? " in float32" : ""));
                    return;
                }
            }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_window_written_as_a_lambda_has_dead_full_and_partial_blocks) {
    BOOST_TEST((kind_of(window, 512, 575, 0, 63) == block_kind::dead));       // more than 256 back
    BOOST_TEST((kind_of(window, 512, 575, 256, 319) == block_kind::partial));  // the window's start
    BOOST_TEST((kind_of(window, 512, 575, 320, 383) == block_kind::full));
    BOOST_TEST((kind_of(window, 512, 575, 512, 575) == block_kind::partial));  // the diagonal
    BOOST_TEST((kind_of(window, 512, 575, 576, 639) == block_kind::dead));     // the future
}

BOOST_AUTO_TEST_CASE(chunks_dilation_global_tokens_and_abs_give_useful_classes) {
    BOOST_TEST((kind_of(chunked, 128, 191, 192, 255) == block_kind::full));  // the same chunk
    BOOST_TEST((kind_of(chunked, 128, 191, 256, 319) == block_kind::dead));
    BOOST_TEST((kind_of(chunked, 100, 163, 100, 163) == block_kind::partial));  // a block across two chunks
    BOOST_TEST((kind_of(dilated, 512, 575, 576, 639) == block_kind::dead));     // the causal half decides
    BOOST_TEST((kind_of(dilated, 512, 575, 0, 63) == block_kind::partial));     // every second key: no block
    BOOST_TEST((kind_of(dilated, 5, 5, 3, 3) == block_kind::full));             // one pair: exact
    BOOST_TEST((kind_of(dilated, 5, 5, 4, 4) == block_kind::dead));
    BOOST_TEST((kind_of(global_and_window, 1024, 1087, 0, 63) == block_kind::partial));  // the global tokens
    BOOST_TEST((kind_of(global_and_window, 1024, 1087, 64, 127) == block_kind::dead));
    BOOST_TEST((kind_of(global_and_window, 1024, 1087, 832, 895) == block_kind::full));
    BOOST_TEST((kind_of(banded_by_abs, 512, 575, 630, 693) == block_kind::partial));
    BOOST_TEST((kind_of(banded_by_abs, 512, 575, 704, 767) == block_kind::dead));
    BOOST_TEST((kind_of(banded_by_abs, 512, 575, 540, 547) == block_kind::full));
    BOOST_TEST((kind_of(clipped, 2000, 2063, 0, 63) == block_kind::full));  // min(q, 1000) ≥ max(kv, 10)
    BOOST_TEST((kind_of(clipped, 2000, 2063, 1001, 1064) == block_kind::dead));
}

// A predicate that reads an input is known only at run time: no block is dead or full here.
BOOST_AUTO_TEST_CASE(reads_of_inputs_leave_blocks_partial) {
    BOOST_TEST((kind_of(documents, 0, 63, 64, 127) == block_kind::partial));
    BOOST_TEST((kind_of(documents, 0, 0, 0, 0) == block_kind::partial));
}

// Real arithmetic is bounded with room for float32 rounding: the blocks at the boundary stay partial.
BOOST_AUTO_TEST_CASE(real_arithmetic_is_never_classified_past_its_rounding) {
    BOOST_TEST((kind_of(real_scaled, 512, 575, 0, 63) == block_kind::dead));
    BOOST_TEST((kind_of(real_scaled, 512, 575, 512, 575) == block_kind::full));
    BOOST_TEST((kind_of(real_scaled, 256, 256, 0, 0) == block_kind::partial));  // 25.6 ≤ 25.6, by rounding
}

// Every class, pair by pair, over blocks of random sizes and places.
BOOST_AUTO_TEST_CASE(no_block_is_ever_classified_wrongly) {
    std::mt19937 rng(20261127);
    std::uniform_int_distribution<int> start(0, 1200), size(0, 70);
    for (int n = 0; n < 400; ++n) {
        const int q0 = start(rng), k0 = start(rng), q1 = q0 + size(rng), k1 = k0 + size(rng);
        check_pairs(window, q0, q1, k0, k1, "window");
        check_pairs(chunked, q0, q1, k0, k1, "chunked");
        check_pairs(dilated, q0, q1, k0, k1, "dilated");
        check_pairs(global_and_window, q0, q1, k0, k1, "global_and_window");
        check_pairs(banded_by_abs, q0, q1, k0, k1, "banded_by_abs");
        check_pairs(real_scaled, q0, q1, k0, k1, "real_scaled");
        check_pairs(clipped, q0, q1, k0, k1, "clipped");
    }
}

// What a code generator makes of a predicate: whether its bounds find any dead block (else every block is
// visited, and the build says so in one line).
BOOST_AUTO_TEST_CASE(which_predicates_skip_blocks) {
    BOOST_TEST(ex::finds_dead_blocks(window.expr));
    BOOST_TEST(ex::finds_dead_blocks(chunked.expr));
    BOOST_TEST(ex::finds_dead_blocks(dilated.expr));
    BOOST_TEST(ex::finds_dead_blocks(global_and_window.expr));
    BOOST_TEST(ex::finds_dead_blocks(clipped.expr));
    BOOST_TEST(!ex::finds_dead_blocks(documents.expr));  // reads only: its blocks are known at run time
    constexpr auto everywhere = dsl::predicate([](auto, auto, auto q, auto kv) { return q - kv < 1e9; });
    BOOST_TEST(!ex::finds_dead_blocks(everywhere.expr));
}

// And whether they find a full block (a kernel then visits those blocks without the predicate).
BOOST_AUTO_TEST_CASE(which_predicates_fill_blocks) {
    BOOST_TEST(ex::finds_full_blocks(window.expr));
    BOOST_TEST(ex::finds_full_blocks(chunked.expr));
    BOOST_TEST(!ex::finds_full_blocks(dilated.expr));  // every second key, in every block
    BOOST_TEST(ex::finds_full_blocks(global_and_window.expr));
    BOOST_TEST(ex::finds_full_blocks(clipped.expr));
    BOOST_TEST(!ex::finds_full_blocks(documents.expr));
    constexpr auto everywhere = dsl::predicate([](auto, auto, auto q, auto kv) { return q - kv < 1e9; });
    BOOST_TEST(ex::finds_full_blocks(everywhere.expr));
}
