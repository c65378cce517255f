// The user variants of bench/user_variants (masks and modifiers written as lambdas; multi-query, 8 query heads,
// one K/V head), a kernel library of their own: every kernel against the interpreter, and the key blocks their
// kernels skip. A predicate's dead blocks are skipped from its expression alone (its bounds over each block,
// codegen/lower/expression_bounds.hpp), as many as the built-in mask that means the same; checked by what the
// kernels do, with the NaN probe (nan_probe.hpp).
#define BOOST_TEST_MODULE user_variants
#include "nan_probe.hpp"
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/reference.hpp>
#include <attnforge/testing/compare.hpp>

#include <functional>
#include <set>
#include <utility>

using namespace nan_probe;

namespace {

// V (B, 1, L, 64): its sequence axis is 2; the output (B, 8, L, 64): its rows too.
Probe probe(const char* variant, std::int64_t dead_first, std::int64_t dead_last, std::int64_t rows_first,
            std::int64_t rows_last) {
    return {variant, {1, 0, {{"tokens", L}}}, {}, "v", 2, dead_first, dead_last, 2, rows_first, rows_last};
}

// The window of lambda_runtime_window, an input.
std::function<void(runtime::TensorMap&)> window_of(std::int32_t window) {
    return [window](runtime::TensorMap& in) { in.at("window").i32.at(0) = window; };
}

// lambda_runtime_window's probe, its window `window` keys long.
Probe runtime_window_probe(std::int32_t window, std::int64_t dead_first, std::int64_t dead_last,
                           std::int64_t rows_first, std::int64_t rows_last) {
    Probe p = probe("lambda_runtime_window", dead_first, dead_last, rows_first, rows_last);
    p.set_indices = window_of(window);
    return p;
}

// lambda_prefix's probe, its prefix `prefix` keys long.
Probe prefix_probe(std::int32_t prefix, std::int64_t dead_first, std::int64_t dead_last, std::int64_t rows_first,
                   std::int64_t rows_last) {
    Probe p = probe("lambda_prefix", dead_first, dead_last, rows_first, rows_last);
    p.set_indices = [prefix](runtime::TensorMap& in) {
        for (std::int32_t& v : in.at("prefix_length").i32) v = prefix;
    };
    return p;
}

// Which (query row, key) pairs of a kernel reach each other: with V NaN at keys [k, k + step) alone, the rows
// that turn NaN, for every k. Rows of a query tile turn NaN together when it visits the key's block.
std::set<std::pair<std::int64_t, std::int64_t>> visits(const runtime::KernelEntry& kernel, std::int64_t length,
                                                       std::int64_t step,
                                                       const std::function<void(runtime::TensorMap&)>& set = {}) {
    const Sizes sizes{1, 0, {{"tokens", length}}};
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (std::int64_t k = 0; k < length; k += step) {
        runtime::TensorMap inputs = attnforge::testing::synthetic_inputs(kernel.signature(), sizes, {});
        if (set) set(inputs);
        poison(inputs.at("v"), 2, k, std::min(k + step, length));
        const runtime::Tensor out = runtime::run_kernel(kernel, inputs);  // (1, 8, L, 64)
        for (std::int64_t row = 0; row < length; ++row) {
            bool nan = false;
            for_slice(out, 2, row, row + 1, [&](std::size_t i) { nan = nan || std::isnan(out.f32[i]); });
            if (nan) seen.emplace(row, k);
        }
    }
    return seen;
}

const runtime::KernelEntry& streaming_kernel(const char* variant) {
    for (const runtime::KernelEntry* k : runtime::kernels_for(variant, "output"))
        if (k->strategy == "streaming") return *k;
    throw std::runtime_error(std::string(variant) + ": no streaming kernel");
}

}  // namespace

// Every kernel (lambda masks, modifiers whose terms became tables of the distance or of the key) within
// docs/contract.md §5 of the interpreter: one query, lengths inside and across tiles, two batch entries, a
// length that is no multiple of any tile.
BOOST_AUTO_TEST_CASE(every_kernel_matches_the_interpreter) {
    int checked = 0;
    for (const runtime::KernelEntry& k : runtime::registry())
        for (const Sizes& sizes : {Sizes{1, 0, {{"tokens", 1}}}, Sizes{2, 0, {{"tokens", 129}}},
                                   Sizes{1, 0, {{"tokens", 700}}}}) {
            const runtime::TensorMap inputs = attnforge::testing::synthetic_inputs(k.signature(), sizes, {});
            const auto reference = runtime::interpret(k.variant, inputs, k.result);
            const auto got = runtime::to_float64(runtime::run_kernel(k, inputs));
            const double error = attnforge::testing::max_abs_diff(got, reference);
            BOOST_TEST(error <= attnforge::testing::contract_bound(reference),
                       k.name << " at L = " << sizes.length.at("tokens") << ", B = " << sizes.batch << ": error "
                              << error);
            ++checked;
        }
    BOOST_TEST(checked >= 33, "kernel runs checked: " << checked);
}

// Dead for the rows [768, 1024): keys [0, 256) under a causal window of 256 (they see keys ≥ 512) and under the
// dilated window of 512 (keys ≥ 256), keys [256, 512) past the global tokens, keys [0, 512) from the chunk
// [512, 768)'s rows; keys [512, 1024) for the rows [0, 256) under causal. Each block of keys is aligned and far
// from the band, so that no tile size of the streaming schedules makes it partial.
BOOST_AUTO_TEST_CASE(lambda_predicates_skip_their_dead_blocks) {
    every_kernel_skips(probe("lambda_causal", 512, L, 0, 256), {"streaming"});
    every_kernel_skips(probe("lambda_window", 0, 256, 768, L), {"streaming"});
    every_kernel_skips(probe("lambda_t5_bias", 0, 256, 768, L), {"streaming"});
    every_kernel_skips(probe("lambda_dilated", 0, 256, 768, L), {"streaming"});
    every_kernel_skips(probe("lambda_global_window", 256, 512, 768, L), {"streaming"});
    every_kernel_skips(probe("lambda_chunked", 0, 512, 512, 768), {"streaming"});
}

// A predicate that reads an input at b alone is bounded by the value the kernel reads, with no pre-pass: under a
// prefix of 128 keys, keys [512, 1024) are dead for the rows [0, 256).
BOOST_AUTO_TEST_CASE(a_prefix_read_at_the_batch_entry_skips_blocks) {
    every_kernel_skips(prefix_probe(128, 512, L, 0, 256), {"streaming"});
}

// A window given at run time (a scalar input) skips as the fixed one does: keys [0, 256) for the rows [768, 1024)
// under a window of 256.
BOOST_AUTO_TEST_CASE(a_run_time_window_skips_blocks) {
    every_kernel_skips(runtime_window_probe(256, 0, 256, 768, L), {"streaming"});
}

// The probe's power: blocks a predicate keeps for some of the rows are visited, and their NaN shows (the window's
// keys [512, 768) for the rows [768, 1024), the global tokens for every row, the own chunk's keys).
BOOST_AUTO_TEST_CASE(the_probe_sees_visited_blocks) {
    BOOST_TEST(!skips(streaming_kernel("lambda_window"), probe("lambda_window", 512, 768, 768, L)));
    BOOST_TEST(!skips(streaming_kernel("lambda_global_window"), probe("lambda_global_window", 0, 64, 768, L)));
    BOOST_TEST(!skips(streaming_kernel("lambda_chunked"), probe("lambda_chunked", 512, 768, 512, 768)));
    BOOST_TEST(!skips(streaming_kernel("lambda_prefix"), prefix_probe(640, 512, 640, 0, 256)));  // inside the prefix
    BOOST_TEST(!skips(streaming_kernel("lambda_runtime_window"), runtime_window_probe(800, 0, 256, 768, L)));
}

// A lambda window visits exactly the key blocks of the built-in sliding_window (bounds known when generating),
// and a lambda causal mask those of causal: the same (row, key) reach, key by key block of 32, at a length that
// is no multiple of the tiles.
BOOST_AUTO_TEST_CASE(a_lambda_visits_the_blocks_of_its_built_in) {
    for (const auto& [lambda, builtin] : {std::pair{"lambda_window", "builtin_window"},
                                          std::pair{"lambda_causal", "builtin_causal"}}) {
        const auto ours = visits(streaming_kernel(lambda), 600, 32);
        const auto theirs = visits(streaming_kernel(builtin), 600, 32);
        BOOST_TEST(ours.size() == theirs.size(), lambda << " reaches " << ours.size() << " (row, key block) pairs, "
                                                        << builtin << " " << theirs.size());
        BOOST_TEST((ours == theirs), lambda << " and " << builtin << " visit different blocks");
    }
    // A window given at run time, 256 keys: the blocks of the fixed one.
    const auto run_time = visits(streaming_kernel("lambda_runtime_window"), 600, 32, window_of(256));
    BOOST_TEST((run_time == visits(streaming_kernel("builtin_window"), 600, 32)),
               "lambda_runtime_window (256) and builtin_window visit different blocks");
}
