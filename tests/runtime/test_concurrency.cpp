// Many threads calling the same and different kernels at once get bit-identical results to serial
// calls (every kernel's parallel tasks are independent, no reduction is split across threads), with
// the process's default thread count and with per-call counts mixed in. tools/sanitize also runs this
// test under ThreadSanitizer, which reports any data race in our code (the run API, the registry, the
// scratch-memory cache, Halide's error handler hook).
#define BOOST_TEST_MODULE runtime_concurrency
#include <attnforge/errors.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/testing/kernels_at.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace runtime = attnforge::runtime;

namespace {

struct Call {
    const runtime::KernelEntry* kernel;
    runtime::TensorMap inputs;
    std::vector<float> serial;  // the result of a call made alone
    std::vector<std::int64_t> shape;
};

std::vector<Call> calls() {
    struct Shape {
        const char* variant;
        attnforge::testing::SyntheticSizes sizes;
    };
    const Shape shapes[] = {
        {"sdpa", {1, 3, {{"q", 70}, {"kv", 130}}}},
        {"sdpa_causal", {2, 2, {{"q", 33}, {"kv", 33}}}},
        {"masked_attention", {2, 2, {{"q", 17}, {"kv", 40}}}},
        {"mha", {2, 0, {{"x", 33}}}},
        {"gqa", {1, 0, {{"x", 48}}}},
        {"cross_attention", {1, 0, {{"x", 9}, {"memory", 65}}}},
    };
    std::vector<Call> out;
    for (const Shape& s : shapes) {
        for (std::string_view result : {"output", "attention_weights"}) {
            for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(s.variant, result)) {
                Call c{k, attnforge::testing::synthetic_inputs(k->signature(), s.sizes, {}), {}, {}};
                runtime::Tensor alone = runtime::run_kernel(*k, c.inputs);
                c.serial = std::move(alone.f32);
                c.shape = alone.shape;
                out.push_back(std::move(c));
            }
        }
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(concurrent_calls_give_the_serial_results_bit_for_bit) {
    const std::vector<Call> work = calls();
    BOOST_TEST_REQUIRE(work.size() >= 12u);
    constexpr int threads = 8, rounds = 3;
    std::atomic<int> mismatches{0}, failures{0};
    std::vector<std::string> first_error(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            try {
                for (int r = 0; r < rounds; ++r) {
                    for (std::size_t i = 0; i < work.size(); ++i) {
                        // Each thread walks the calls from a different start: at any moment some threads
                        // run the same kernel, others different ones.
                        const Call& c = work[(i + static_cast<std::size_t>(t) * 5) % work.size()];
                        runtime::RunOptions options;
                        options.threads =
                            (t + r + static_cast<int>(i)) % 7 == 0 ? 1 + t % 2 : 0;  // some per-call counts
                        if ((t + i) % 2 == 0) {
                            if (runtime::run_kernel(*c.kernel, c.inputs, options).f32 != c.serial) ++mismatches;
                        } else {
                            runtime::Tensor out = runtime::Tensor::float32(c.shape);
                            runtime::run_kernel_into(*c.kernel, c.inputs, out, options);
                            if (out.f32 != c.serial) ++mismatches;
                        }
                    }
                }
            } catch (const std::exception& e) {
                ++failures;
                first_error[static_cast<std::size_t>(t)] = e.what();
            }
        });
    }
    for (auto& th : pool) th.join();
    for (const auto& e : first_error) BOOST_TEST(e.empty(), e);
    BOOST_TEST(failures.load() == 0);
    BOOST_TEST(mismatches.load() == 0);
}

// Errors are per call: a thread given bad input gets its input_error while the others' calls succeed.
BOOST_AUTO_TEST_CASE(a_bad_call_on_one_thread_does_not_disturb_the_others) {
    const runtime::KernelEntry& k = *attnforge::testing::kernels_at("sdpa", "output").front();
    const auto good = attnforge::testing::synthetic_inputs(k.signature(), {1, 2, {{"q", 40}, {"kv", 50}}}, {});
    const auto expected = runtime::run_kernel(k, good).f32;
    auto bad = good;
    bad["k"] = runtime::Tensor::float32({1, 2, 50, 32});
    std::atomic<int> wrong{0}, rejected{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 6; ++t) {
        pool.emplace_back([&, t] {
            for (int i = 0; i < 20; ++i) {
                if (t % 3 == 0) {
                    try {
                        runtime::run_kernel(k, bad);
                    } catch (const attnforge::input_error&) {
                        ++rejected;
                    }
                } else if (runtime::run_kernel(k, good).f32 != expected) {
                    ++wrong;
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    BOOST_TEST(rejected.load() == 2 * 20);
    BOOST_TEST(wrong.load() == 0);
}
