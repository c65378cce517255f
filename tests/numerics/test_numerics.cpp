// Numerics of every attention kernel against the float64 interpreter and against the policy the
// docs/robustness.md states:
//   - NaN or ±Inf in a query row reaches only that output row; in a key or value row, only rows of
//     its own batch entry and head (for layers: its own batch entry); never a silent zero row;
//   - fully masked rows give exact zeros (and logsumexp -inf in the interpreter), never NaN;
//   - tiny and huge magnitudes and long rows (Lk = 16384) stay within docs/contract.md §5.
//   - logits of exactly ±1e4 (and tests/kernels checks every kernel with logits of ~1e4).
#define BOOST_TEST_MODULE numerics
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/runtime/reference.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/testing/compare.hpp>
#include <attnforge/testing/kernels_at.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

namespace dsl = attnforge::dsl;
namespace interp = attnforge::interp;
namespace runtime = attnforge::runtime;

namespace {

constexpr float a_nan = std::numeric_limits<float>::quiet_NaN();
constexpr float an_inf = std::numeric_limits<float>::infinity();

runtime::TensorMap sdpa_inputs(std::int64_t B, std::int64_t H, std::int64_t Lq, std::int64_t Lk, unsigned seed = 1) {
    return attnforge::testing::synthetic_inputs(attnforge::testing::kernels_at("sdpa", "output").front()->signature(),
                                                {B, H, {{"q", Lq}, {"kv", Lk}}}, {.seed = seed});
}

// Element (b, h, i, e) of a (B, H, L, E) tensor.
float& at(runtime::Tensor& t, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t e) {
    const auto& s = t.shape;
    return t.f32[static_cast<std::size_t>(((b * s[1] + h) * s[2] + i) * s[3] + e)];
}

interp::Tensor reference(std::string_view variant, const runtime::TensorMap& inputs, bool intermediates = false) {
    interp::Tensor out;
    dsl::with_builtin_variant(variant, [&](const auto& g) {
        out = interp::evaluate(g, runtime::to_float64(inputs), {.intermediates = intermediates}).output;
    });
    return out;
}

// Row r of the output (rows of `width` values) holds a NaN.
bool row_has_nan(const std::vector<float>& v, std::size_t row, std::size_t width) {
    for (std::size_t e = 0; e < width; ++e)
        if (std::isnan(v[row * width + e])) return true;
    return false;
}

bool row_all_nan(const std::vector<float>& v, std::size_t row, std::size_t width) {
    for (std::size_t e = 0; e < width; ++e)
        if (!std::isnan(v[row * width + e])) return false;
    return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(nan_in_a_query_row_reaches_only_that_row) {
    for (std::string_view variant : {"sdpa", "sdpa_causal"}) {
        for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(variant, "output")) {
            BOOST_TEST_CONTEXT(k->name) {
                auto in = sdpa_inputs(2, 2, 20, 20);
                const auto clean = runtime::run_kernel(*k, in).f32;
                at(in["q"], 1, 0, 5, 3) = a_nan;
                const auto got = runtime::run_kernel(*k, in).f32;
                const std::size_t poisoned = (1 * 2 + 0) * 20 + 5;  // row (b=1, h=0, i=5)
                BOOST_TEST(row_all_nan(got, poisoned, 64));
                for (std::size_t i = 0; i < got.size(); ++i)
                    if (i / 64 != poisoned && !(got[i] == clean[i])) BOOST_FAIL("element " << i << " changed");
                const auto ref = reference(variant, in);
                for (std::size_t e = 0; e < 64; ++e) BOOST_TEST(std::isnan(ref.data[poisoned * 64 + e]));
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(nan_or_inf_in_keys_and_values_stays_in_its_batch_entry_and_head) {
    for (std::string_view variant : {"sdpa", "sdpa_causal"}) {
        for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(variant, "output")) {
            BOOST_TEST_CONTEXT(k->name) {
                auto in = sdpa_inputs(2, 2, 20, 20);
                const auto clean = runtime::run_kernel(*k, in).f32;
                at(in["k"], 0, 1, 7, 2) = an_inf;  // head (0, 1)
                at(in["v"], 1, 0, 3, 9) = a_nan;   // head (1, 0)
                const auto got = runtime::run_kernel(*k, in).f32;
                const auto ref = reference(variant, in);
                for (std::size_t i = 0; i < got.size(); ++i) {
                    const std::size_t head = i / (20 * 64), row = i / 64 % 20;
                    if (head != 1 && head != 2) {
                        if (!(got[i] == clean[i])) BOOST_FAIL("element " << i << " of an untouched head changed");
                        continue;
                    }
                    if (std::isnan(ref.data[i])) {
                        BOOST_TEST(std::isnan(got[i]),
                                   "element " << i << ": the interpreter gives NaN, the kernel " << got[i]);
                    } else if (!std::isnan(got[i])) {
                        BOOST_TEST(std::abs(got[i] - ref.data[i]) <= 1e-4 * (1 + std::abs(ref.data[i])),
                                   "element " << i);
                    } else {
                        // A NaN value row at a masked key: the interpreter skips it (weight exactly 0),
                        // the kernel may multiply 0 by it. The policy allows this within the head.
                        BOOST_TEST((variant == "sdpa_causal" && head == 2 && row < 3), "element " << i << " NaN");
                    }
                }
                // Every query of head (1, 0) that attends key 3 reads the NaN.
                for (std::size_t row = variant == "sdpa" ? 0 : 3; row < 20; ++row)
                    BOOST_TEST(row_has_nan(got, 2 * 20 + row, 64), "row " << row);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(nan_in_a_layer_input_stays_in_its_batch_entry) {
    for (std::string_view variant : {"mha", "mha_causal", "self_attention_layer"}) {
        for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(variant, "output")) {
            BOOST_TEST_CONTEXT(k->name) {
                auto in = attnforge::testing::synthetic_inputs(k->signature(), {2, 0, {{"x", 9}}}, {});
                const auto clean = runtime::run_kernel(*k, in).f32;
                in["x"].f32[3 * 512 + 10] = a_nan;  // x[b=0, l=3, d=10]
                const auto got = runtime::run_kernel(*k, in).f32;
                for (std::size_t i = 9 * 512; i < got.size(); ++i)  // batch entry 1
                    if (!(got[i] == clean[i])) BOOST_FAIL("element " << i << " of the other batch entry changed");
                BOOST_TEST(row_all_nan(got, 3, 512));  // its own row reads its own query
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(fully_masked_rows_give_zeros_and_logsumexp_minus_infinity) {
    // masked_attention's synthetic mask masks every key of query row 1 (B, Lq, Lk), true = takes part.
    const runtime::KernelEntry& first = *attnforge::testing::kernels_at("masked_attention", "output").front();
    const auto in = attnforge::testing::synthetic_inputs(first.signature(), {2, 2, {{"q", 6}, {"kv", 11}}}, {});
    for (const runtime::KernelEntry* k : attnforge::testing::kernels_at("masked_attention", "output")) {
        BOOST_TEST_CONTEXT(k->name) {
            const auto got = runtime::run_kernel(*k, in).f32;
            for (std::int64_t h = 0; h < 2; ++h)
                for (std::size_t e = 0; e < 64; ++e)
                    BOOST_TEST(got[static_cast<std::size_t>((0 * 2 + h) * 6 + 1) * 64 + e] == 0.0f);
        }
    }
    dsl::with_builtin_variant("masked_attention", [&](const auto& g) {
        const auto r = interp::evaluate(g, runtime::to_float64(in));
        const interp::Tensor& lse = r.intermediates.at("attention_logsumexp");  // (B, H, Lq)
        for (std::size_t i = 0; i < lse.data.size(); ++i) {
            const bool masked_row = i / 6 < 2 && i % 6 == 1;  // batch entry 0, either head, row 1
            BOOST_TEST(
                (masked_row ? lse.data[i] == -std::numeric_limits<double>::infinity() : std::isfinite(lse.data[i])), i);
        }
    });
    // mha_padding: the synthetic padding masks every key of batch entry 1: attention is zero there,
    // so the layer's output is the output projection of zeros, exactly zero.
    for (const runtime::KernelEntry* k : attnforge::testing::kernels_at("mha_padding", "output")) {
        BOOST_TEST_CONTEXT(k->name) {
            const auto pin = attnforge::testing::synthetic_inputs(k->signature(), {2, 0, {{"x", 13}}}, {});
            const auto got = runtime::run_kernel(*k, pin).f32;
            for (std::size_t i = 13 * 512; i < got.size(); ++i) BOOST_TEST_REQUIRE(got[i] == 0.0f);
        }
    }
}

BOOST_AUTO_TEST_CASE(tiny_and_huge_magnitudes_stay_within_the_contract_relative_to_their_scale) {
    struct Scale {
        float qk, v;
    };
    // Values of 1e-30 and 1e30; logits of ~1e-38 (uniform weights) and ~1e20 (one-hot weights).
    for (const Scale s : {Scale{1, 1e-30f}, Scale{1, 1e30f}, Scale{1e-20f, 1}, Scale{1e10f, 1}}) {
        auto in = sdpa_inputs(1, 2, 33, 70, 5);
        for (auto* name : {"q", "k"})
            for (float& x : in[name].f32) x *= s.qk;
        for (float& x : in["v"].f32) x *= s.v;
        const auto ref = reference("sdpa", in);
        const double scale = attnforge::testing::max_abs(ref);
        for (std::string_view variant : {"sdpa", "sdpa_causal"}) {
            const auto ref_v = reference(variant, in);
            for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(variant, "output")) {
                BOOST_TEST_CONTEXT(k->name << " q,k ×" << s.qk << " v ×" << s.v) {
                    const auto got = runtime::to_float64(runtime::run_kernel(*k, in));
                    BOOST_TEST(attnforge::testing::max_abs_diff(got, ref_v) <= 1e-4 * scale);
                }
            }
        }
    }
}

// Long rows: 16384 keys per query, where a float32 sum taken one key at a time would drift. Values
// with a large common offset make drift visible: the output is close to 1000 and the bound is 0.1.
BOOST_AUTO_TEST_CASE(long_rows_of_16384_keys_do_not_drift) {
    for (const float offset : {0.0f, 1000.0f}) {
        auto in = sdpa_inputs(1, 2, 8, 16384, 9);
        for (float& x : in["v"].f32) x += offset;
        for (std::string_view variant : {"sdpa", "sdpa_causal"}) {
            const auto ref = reference(variant, in);
            const double bound = 1e-4 * (1 + attnforge::testing::max_abs(ref));
            for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(variant, "output")) {
                BOOST_TEST_CONTEXT(k->name << " offset " << offset) {
                    const auto got = runtime::to_float64(runtime::run_kernel(*k, in));
                    BOOST_TEST(attnforge::testing::max_abs_diff(got, ref) <= bound);
                }
            }
        }
    }
}

// Logits of exactly ±1e4 and everything between: q·k/√64 with q = ±200 and k = 400·s in the first
// column only, so every product is exact in float32 and the interpreter sees the same logits.
BOOST_AUTO_TEST_CASE(logits_of_plus_and_minus_1e4) {
    auto in = sdpa_inputs(1, 2, 9, 41, 3);
    for (float& x : in["q"].f32) x = 0.0f;
    for (float& x : in["k"].f32) x = 0.0f;
    for (std::int64_t h = 0; h < 2; ++h) {
        for (std::int64_t i = 0; i < 9; ++i) at(in["q"], 0, h, i, 0) = i % 2 == 0 ? 200.0f : -200.0f;
        for (std::int64_t j = 0; j < 41; ++j) at(in["k"], 0, h, j, 0) = 400.0f * static_cast<float>(j - 20) / 20.0f;
    }
    for (std::string_view variant : {"sdpa", "sdpa_causal"}) {
        const auto ref = reference(variant, in);
        const double bound = 1e-4 * (1 + attnforge::testing::max_abs(ref));
        for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(variant, "output")) {
            BOOST_TEST_CONTEXT(k->name) {
                const auto got = runtime::to_float64(runtime::run_kernel(*k, in));
                BOOST_TEST(attnforge::testing::max_abs_diff(got, ref) <= bound);
            }
        }
    }
}
