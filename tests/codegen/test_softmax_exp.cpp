// softmax_exp2 (codegen/lower/softmax_exp.hpp), the exp every attention core uses, compiled just in
// time the way the kernels use it (vectors of the target's width, Halide's fast-math flags) and compared
// with std::exp2 in double: relative error within 5e-7 (2.8e-7 measured when it was written) from
// 2^-126 up; exactly 0 below −126 and for −∞ (masked keys weigh nothing); NaN stays NaN; above 127
// saturated at 2^127.
#define BOOST_TEST_MODULE codegen_softmax_exp
#include <attnforge/codegen/lower/softmax_exp.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace cg = attnforge::codegen;

namespace {

std::vector<float> exp2_of(const std::vector<float>& xs, cg::ExpAccuracy accuracy = cg::ExpAccuracy::float32) {
    Halide::Buffer<float> in(static_cast<int>(xs.size()));
    for (std::size_t i = 0; i < xs.size(); ++i) in(static_cast<int>(i)) = xs[i];
    Halide::Var i("i");
    Halide::Func f("exp2");
    f(i) = cg::softmax_exp2(in(i), accuracy);
    const Halide::Target target = Halide::get_jit_target_from_environment();
    f.vectorize(i, target.natural_vector_size<float>(), Halide::TailStrategy::GuardWithIf);
    const Halide::Buffer<float> out = f.realize({static_cast<int>(xs.size())}, target);
    return {out.begin(), out.end()};
}

// The relative error of 2^x over [−126, 0.5], with the n switch points, for one accuracy.
double worst_relative_error(cg::ExpAccuracy accuracy, float& worst_x) {
    std::vector<float> xs;
    for (double x = -126.0; x <= 0.5; x += 1.0 / 4096) xs.push_back(static_cast<float>(x));
    // Just around the integers, where n changes.
    for (int n = -125; n <= 0; ++n) {
        const float half = static_cast<float>(n) - 0.5f;
        for (float x : {std::nextafter(half, -200.0f), half, std::nextafter(half, 0.0f)}) xs.push_back(x);
    }
    const std::vector<float> ys = exp2_of(xs, accuracy);
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double exact = std::exp2(static_cast<double>(xs[i]));
        const double error = std::abs(ys[i] - exact) / exact;
        if (error > worst) worst = error, worst_x = xs[i];
    }
    return worst;
}

}  // namespace

BOOST_AUTO_TEST_CASE(relative_error_over_the_range_a_softmax_reaches) {
    float worst_x = 0;
    const double worst = worst_relative_error(cg::ExpAccuracy::float32, worst_x);
    BOOST_TEST(worst <= 5e-7, "largest relative error " << worst << " at x = " << worst_x);
}

// Weights rounded to bf16 afterwards (half an ulp: 2^-9 ≈ 2e-3): 7.5e-5 measured when it was written.
BOOST_AUTO_TEST_CASE(relative_error_of_the_bf16_weights_polynomial) {
    float worst_x = 0;
    const double worst = worst_relative_error(cg::ExpAccuracy::bf16_weights, worst_x);
    BOOST_TEST(worst <= 1e-4, "largest relative error " << worst << " at x = " << worst_x);
}

BOOST_AUTO_TEST_CASE(masked_and_invalid_arguments) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> xs = {-inf, -1000.0f, -127.0f, std::nextafter(-126.0f, -200.0f), nan, 0.0f};
    const std::vector<float> ys = exp2_of(xs);
    for (std::size_t i = 0; i < 4; ++i)
        BOOST_TEST(ys[i] == 0.0f, "2^" << xs[i] << " = " << ys[i] << ", expected exactly 0");
    BOOST_TEST(std::isnan(ys[4]), "2^NaN = " << ys[4] << ", expected NaN");
    BOOST_TEST(std::abs(ys[5] - 1.0f) <= 5e-7f);
}

// Above 127 (a key past Lk whose clamped score a position modifier lifted above the row max): saturated
// at 2^127, finite, so that its weight times the zero V past Lk stays zero (lower/materialized.hpp).
BOOST_AUTO_TEST_CASE(large_arguments_saturate_finite) {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> xs = {127.0f, 127.4f, 128.0f, 300.0f, 384.0f, 1e30f, inf};
    const std::vector<float> ys = exp2_of(xs);
    for (std::size_t i = 0; i < xs.size(); ++i)
        BOOST_TEST((std::isfinite(ys[i]) && std::abs(ys[i] / std::exp2(127.0) - 1.0) <= 1e-6),
                   "2^" << xs[i] << " = " << ys[i] << ", expected 2^127");
}
