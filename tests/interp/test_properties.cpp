// Properties the interpreter must have whatever the data: softmax rows sum to 1, masked entries are
// exactly 0, self-attention is permutation-equivariant, one head equals single-head attention, GQA
// equals MHA with repeated K/V heads, fully masked rows give zeros, logits of 1e4 stay exact.
#define BOOST_TEST_MODULE interp_properties
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/testing/compare.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

namespace dsl = attnforge::dsl;
namespace interp = attnforge::interp;
using attnforge::testing::max_abs_diff;
using i64 = std::int64_t;

namespace {

interp::Tensor random_tensor(std::vector<i64> shape, unsigned seed, double scale = 1.0) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-scale, scale);
    interp::Tensor t(std::move(shape));
    for (double& v : t.data) v = u(gen);
    return t;
}

interp::TensorMap mha_inputs(i64 B, i64 L, unsigned seed) {
    return {{"x", random_tensor({B, L, 512}, seed)},
            {"wq", random_tensor({512, 512}, seed + 1, 0.1)},
            {"wk", random_tensor({512, 512}, seed + 2, 0.1)},
            {"wv", random_tensor({512, 512}, seed + 3, 0.1)},
            {"wo", random_tensor({512, 512}, seed + 4, 0.1)}};
}

interp::TensorMap sdpa_inputs(i64 B, i64 H, i64 Lq, i64 Lk, unsigned seed) {
    return {{"q", random_tensor({B, H, Lq, 64}, seed)},
            {"k", random_tensor({B, H, Lk, 64}, seed + 1)},
            {"v", random_tensor({B, H, Lk, 64}, seed + 2)}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(softmax_rows_sum_to_one) {
    for (const auto& r : {interp::evaluate(dsl::variants::mha, mha_inputs(2, 7, 1)),
                          interp::evaluate(dsl::variants::sdpa_causal, sdpa_inputs(2, 3, 9, 9, 5))}) {
        const auto& w = r.intermediates.at("attention_weights");
        const i64 Lk = w.shape.back();
        for (i64 row = 0; row < w.element_count() / Lk; ++row) {
            double sum = 0;
            for (i64 j = 0; j < Lk; ++j) sum += w.data[static_cast<std::size_t>(row * Lk + j)];
            BOOST_TEST(std::abs(sum - 1.0) <= 1e-12);
        }
    }
}

BOOST_AUTO_TEST_CASE(masked_entries_are_exactly_zero) {
    const auto causal = interp::evaluate(dsl::variants::sdpa_causal, sdpa_inputs(1, 2, 6, 8, 7));
    const auto& w = causal.intermediates.at("attention_weights");  // (1, 2, 6, 8)
    for (i64 h = 0; h < 2; ++h)
        for (i64 i = 0; i < 6; ++i)
            for (i64 j = 0; j < 8; ++j) {
                const double p = w.data[static_cast<std::size_t>((h * 6 + i) * 8 + j)];
                if (j > i)
                    BOOST_TEST(p == 0.0);  // top-left causal: key j > query i is masked
                else
                    BOOST_TEST(p > 0.0);
            }

    auto inputs = mha_inputs(2, 5, 11);
    interp::Tensor padded({2, 5});
    padded.data = {0, 0, 1, 0, 1, /**/ 0, 1, 1, 1, 1};  // true = padded key
    inputs["key_padding_mask"] = padded;
    const auto r = interp::evaluate(dsl::variants::mha_padding, inputs);
    const auto& pw = r.intermediates.at("attention_weights");  // (2, 8, 5, 5)
    for (i64 b = 0; b < 2; ++b)
        for (i64 h = 0; h < 8; ++h)
            for (i64 i = 0; i < 5; ++i)
                for (i64 j = 0; j < 5; ++j) {
                    const double p = pw.data[static_cast<std::size_t>(((b * 8 + h) * 5 + i) * 5 + j)];
                    if (padded.data[static_cast<std::size_t>(b * 5 + j)] != 0)
                        BOOST_TEST(p == 0.0);
                    else
                        BOOST_TEST(p > 0.0);
                }
}

BOOST_AUTO_TEST_CASE(self_attention_without_mask_is_permutation_equivariant) {
    const i64 B = 2, L = 6;
    const auto inputs = mha_inputs(B, L, 21);
    const std::vector<i64> perm = {3, 0, 5, 1, 4, 2};
    interp::TensorMap permuted = inputs;
    auto& px = permuted["x"];
    for (i64 b = 0; b < B; ++b)
        for (i64 i = 0; i < L; ++i)
            std::copy_n(inputs.at("x").ptr() + (b * L + perm[i]) * 512, 512, px.ptr() + (b * L + i) * 512);
    const auto y = interp::evaluate(dsl::variants::mha, inputs).output;
    const auto py = interp::evaluate(dsl::variants::mha, permuted).output;
    double worst = 0;
    for (i64 b = 0; b < B; ++b)
        for (i64 i = 0; i < L; ++i)
            for (i64 d = 0; d < 512; ++d)
                worst = std::max(worst, std::abs(py.data[static_cast<std::size_t>((b * L + i) * 512 + d)] -
                                                 y.data[static_cast<std::size_t>((b * L + perm[i]) * 512 + d)]));
    BOOST_TEST(worst <= 1e-12);
}

BOOST_AUTO_TEST_CASE(one_head_equals_single_head_attention) {
    // Multi-head machinery with Hq = 1, against single-head attention written out by hand.
    constexpr auto x = dsl::activation<"x", 16>();
    constexpr auto one_head = dsl::make_graph<"one_head">(
        dsl::multi_head_attention<1, 1>(x, x, dsl::weight<"wq", 16, 16>(), dsl::weight<"wk", 16, 16>(),
                                        dsl::weight<"wv", 16, 16>(), dsl::weight<"wo", 16, 16>()));
    const i64 L = 5, D = 16;
    const interp::TensorMap in = {{"x", random_tensor({1, L, D}, 31)},
                                  {"wq", random_tensor({D, D}, 32)},
                                  {"wk", random_tensor({D, D}, 33)},
                                  {"wv", random_tensor({D, D}, 34)},
                                  {"wo", random_tensor({D, D}, 35)}};
    auto matmul = [](const std::vector<double>& a, const std::vector<double>& b, i64 n, i64 k, i64 m) {
        std::vector<double> c(static_cast<std::size_t>(n * m), 0.0);
        for (i64 i = 0; i < n; ++i)
            for (i64 t = 0; t < k; ++t)
                for (i64 j = 0; j < m; ++j) c[i * m + j] += a[i * k + t] * b[t * m + j];
        return c;
    };
    const auto q = matmul(in.at("x").data, in.at("wq").data, L, D, D);
    const auto k = matmul(in.at("x").data, in.at("wk").data, L, D, D);
    const auto v = matmul(in.at("x").data, in.at("wv").data, L, D, D);
    std::vector<double> p(static_cast<std::size_t>(L * L));
    for (i64 i = 0; i < L; ++i) {
        double m = -INFINITY, sum = 0;
        for (i64 j = 0; j < L; ++j) {
            double s = 0;
            for (i64 e = 0; e < D; ++e) s += q[i * D + e] * k[j * D + e];
            p[i * L + j] = s / std::sqrt(double(D));
            m = std::max(m, p[i * L + j]);
        }
        for (i64 j = 0; j < L; ++j) sum += (p[i * L + j] = std::exp(p[i * L + j] - m));
        for (i64 j = 0; j < L; ++j) p[i * L + j] /= sum;
    }
    const auto expected = matmul(matmul(p, v, L, L, D), in.at("wo").data, L, D, D);
    const auto y = interp::evaluate(one_head, in).output;
    BOOST_TEST(max_abs_diff(y, interp::Tensor({1, L, D}, expected)) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(gqa_equals_mha_with_repeated_kv_heads) {
    // Hkv = Hq: the GQA graph is MHA.
    constexpr auto gqa8 = dsl::make_graph<"gqa8">(dsl::multi_head_attention<8, 8>(
        dsl::variants::x512, dsl::variants::x512, dsl::variants::wq, dsl::weight<"wk", 512, 512>(),
        dsl::weight<"wv", 512, 512>(), dsl::variants::wo));
    const auto inputs = mha_inputs(2, 5, 41);
    BOOST_TEST(max_abs_diff(interp::evaluate(gqa8, inputs).output,
                            interp::evaluate(dsl::variants::mha, inputs).output) == 0.0);

    // Hq = 8, Hkv = 2: equal to MHA whose K/V weights repeat each KV head's columns for its 4 query heads.
    interp::TensorMap g = inputs;
    g["wk"] = random_tensor({512, 128}, 42, 0.1);
    g["wv"] = random_tensor({512, 128}, 43, 0.1);
    interp::TensorMap m = inputs;
    for (const char* name : {"wk", "wv"}) {
        interp::Tensor wide({512, 512});
        for (i64 r = 0; r < 512; ++r)
            for (i64 h = 0; h < 8; ++h)  // query head h reads kv head h / 4
                std::copy_n(g[name].ptr() + r * 128 + (h / 4) * 64, 64, wide.ptr() + r * 512 + h * 64);
        m[name] = wide;
    }
    BOOST_TEST(max_abs_diff(interp::evaluate(dsl::variants::gqa, g).output,
                            interp::evaluate(dsl::variants::mha, m).output) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(fully_masked_rows_give_zeros_and_logsumexp_minus_infinity) {
    auto inputs = mha_inputs(2, 4, 51);
    interp::Tensor padded({2, 4});
    padded.data = {0, 0, 0, 1, /**/ 1, 1, 1, 1};  // the second sequence is all padding
    inputs["key_padding_mask"] = padded;
    const auto r = interp::evaluate(dsl::variants::mha_padding, inputs);
    for (i64 i = 4 * 512; i < 8 * 512; ++i) BOOST_TEST(r.output.data[static_cast<std::size_t>(i)] == 0.0);
    const auto& lse = r.intermediates.at("attention_logsumexp");  // (2, 8, 4)
    for (i64 i = 0; i < 32; ++i) BOOST_TEST(std::isfinite(lse.data[static_cast<std::size_t>(i)]));
    for (i64 i = 32; i < 64; ++i) BOOST_TEST(lse.data[static_cast<std::size_t>(i)] == -INFINITY);
    for (double v : r.output.data) BOOST_TEST(!std::isnan(v));
}

BOOST_AUTO_TEST_CASE(logits_of_1e4_stay_finite_and_exact) {
    // Scores s_j = ±1e4 + d_j exactly (q = (8, 0, ...), k_j = (±1e4 + d_j, 0, ...), scale 1/8), so the
    // weights must equal softmax(d) and the logsumexp ±1e4 + log Σ exp(d).
    const std::vector<double> d = {0.5, -1.25, 2.0, 0.0, -3.5};
    for (const double base : {1e4, -1e4}) {
        auto in = sdpa_inputs(1, 1, 1, 5, 61);
        std::fill(in["q"].data.begin(), in["q"].data.end(), 0.0);
        std::fill(in["k"].data.begin(), in["k"].data.end(), 0.0);
        in["q"].data[0] = 8.0;
        for (std::size_t j = 0; j < d.size(); ++j) in["k"].data[j * 64] = base + d[j];
        const auto r = interp::evaluate(dsl::variants::sdpa, in);
        double z = 0;
        for (double dj : d) z += std::exp(dj);
        const auto& w = r.intermediates.at("attention_weights");
        for (std::size_t j = 0; j < d.size(); ++j) BOOST_TEST(std::abs(w.data[j] - std::exp(d[j]) / z) <= 1e-15);
        BOOST_TEST(std::abs(r.intermediates.at("attention_logsumexp").data[0] - (base + std::log(z))) <= 1e-9);
        for (double v : r.output.data) BOOST_TEST(std::isfinite(v));
    }
}

BOOST_AUTO_TEST_CASE(predicate_and_modifier_expressions_follow_their_definitions) {
    // sliding_window(128): query i sees keys i-128 .. i.
    const auto r = interp::evaluate(dsl::variants::sliding_window_attention, sdpa_inputs(1, 1, 140, 140, 71));
    const auto& w = r.intermediates.at("attention_weights");
    for (i64 i = 0; i < 140; ++i)
        for (i64 j = 0; j < 140; ++j) {
            const bool visible = j <= i && i - j <= 128;
            BOOST_TEST((w.data[static_cast<std::size_t>(i * 140 + j)] > 0.0) == visible);
        }
}

BOOST_AUTO_TEST_CASE(intermediates_only_on_request) {
    const auto in = sdpa_inputs(1, 2, 3, 4, 91);
    const auto with = interp::evaluate(dsl::variants::sdpa, in);
    const auto without = interp::evaluate(dsl::variants::sdpa, in, {.intermediates = false});
    BOOST_TEST(with.intermediates.size() == 2u);
    BOOST_TEST(without.intermediates.empty());
    BOOST_TEST(with.output.data == without.output.data, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_bias_is_added_after_the_product) {
    // docs/contract.md §1: Q = X · Wq + bq.
    constexpr auto x = dsl::activation<"x", 8>();
    constexpr auto w = dsl::weight<"w", 8, 4>();
    constexpr auto with_bias = dsl::make_graph<"with_bias">(dsl::linear(x, w, dsl::weight_vector<"b", 4>()));
    constexpr auto without = dsl::make_graph<"without">(dsl::linear(x, w));
    const interp::TensorMap in = {{"x", random_tensor({2, 3, 8}, 81)}, {"w", random_tensor({8, 4}, 82)}};
    interp::TensorMap in_b = in;
    in_b["b"] = interp::Tensor({4}, {1.5, -2.0, 0.25, 3.0});
    const auto y = interp::evaluate(without, in).output, yb = interp::evaluate(with_bias, in_b).output;
    for (std::size_t i = 0; i < y.data.size(); ++i) BOOST_TEST(yb.data[i] == y.data[i] + in_b["b"].data[i % 4]);
}
