// Proves the Halide toolchain end to end: a generator compiled ahead of time by CMake
// (codegen/generators/row_softmax_generator.cpp) is linked and called here with real buffers.
#define BOOST_TEST_MODULE halide_toolchain
#include <HalideBuffer.h>
#include <boost/test/unit_test.hpp>

#include <attnforge_row_softmax.h>
#include <cmath>
#include <limits>
#include <vector>

namespace {

// Row softmax in double, the plain way, for comparison.
std::vector<double> reference_softmax(const std::vector<float>& row) {
    double m = -std::numeric_limits<double>::infinity();
    for (float s : row) m = std::max(m, static_cast<double>(s));
    std::vector<double> out(row.size(), 0.0);
    if (std::isinf(m) && m < 0) return out;
    double sum = 0;
    for (std::size_t j = 0; j < row.size(); ++j) sum += (out[j] = std::exp(row[j] - m));
    for (double& w : out) w /= sum;
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(generated_softmax_matches_double_reference_including_masked_rows) {
    const int Lq = 5, Lk = 37;  // Lk not a multiple of the vector width: exercises the tail
    const float inf = std::numeric_limits<float>::infinity();
    Halide::Runtime::Buffer<float> scores(Lk, Lq), weights(Lk, Lq);
    for (int q = 0; q < Lq; ++q)
        for (int k = 0; k < Lk; ++k) scores(k, q) = static_cast<float>(std::sin(q * 7 + k)) * 3.0f;
    for (int k = 0; k < Lk; ++k) scores(k, 1) = -inf;             // fully masked row
    for (int k = 0; k < Lk; k += 2) scores(k, 2) = -inf;          // half masked row
    for (int k = 0; k < Lk; ++k) scores(k, 3) = 1e4f + float(k);  // large logits

    BOOST_REQUIRE_EQUAL(attnforge_row_softmax(scores, weights), 0);

    for (int q = 0; q < Lq; ++q) {
        std::vector<float> row(Lk);
        for (int k = 0; k < Lk; ++k) row[k] = scores(k, q);
        const std::vector<double> expected = reference_softmax(row);
        for (int k = 0; k < Lk; ++k) {
            BOOST_TEST_CONTEXT("q=" << q << " k=" << k) {
                BOOST_TEST(std::isfinite(weights(k, q)));
                BOOST_TEST(std::abs(weights(k, q) - expected[k]) <= 1e-6);
            }
        }
    }
    for (int k = 0; k < Lk; ++k) BOOST_TEST(weights(k, 1) == 0.0f);
}
