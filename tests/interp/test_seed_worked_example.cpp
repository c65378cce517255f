// Seed 004's worked example through the interpreter: the scores Q·Kᵀ, the softmax weights PyTorch
// prints, and the outputs with the true weights (values from shared/seeds/README.md), to 1e-5.
#define BOOST_TEST_MODULE seed_worked_example
#include "examples/seed_data.hpp"
#include <attnforge/interp/interpreter.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>

namespace dsl = attnforge::dsl;
namespace interp = attnforge::interp;

BOOST_AUTO_TEST_CASE(scores_weights_and_outputs_match_the_seed) {
    const auto inputs = attnforge::examples::seed_004_inputs();

    // Scores without scaling: the same graph with scale 1.
    constexpr auto x = dsl::unbatched_activation<"x", 4>();
    constexpr auto scores_only =
        dsl::make_graph<"seed_scores">(dsl::score(dsl::split_heads<1>(dsl::linear(x, dsl::weight<"wq", 4, 3>())),
                                                  dsl::split_heads<1>(dsl::linear(x, dsl::weight<"wk", 4, 3>())), 1.0));
    interp::TensorMap qk_inputs = inputs;
    qk_inputs.erase("wv");
    const auto scores = interp::evaluate(scores_only, qk_inputs).output;  // (H=1, 3, 3)
    const double expected_scores[] = {2, 4, 4, 4, 16, 12, 4, 12, 10};
    BOOST_TEST(scores.shape == (std::vector<std::int64_t>{1, 3, 3}), boost::test_tools::per_element());
    for (int i = 0; i < 9; ++i) BOOST_TEST(std::abs(scores.data[i] - expected_scores[i]) <= 1e-5);

    const auto r = interp::evaluate(dsl::variants::seed_attention, inputs);
    const double expected_weights[] = {0.13613,  0.43194,   0.43194, 0.00089045, 0.90884,
                                       0.090267, 0.0074449, 0.75471, 0.23785};
    const auto& w = r.intermediates.at("attention_weights");
    for (int i = 0; i < 9; ++i) BOOST_TEST(std::abs(w.data[i] - expected_weights[i]) <= 1e-5);

    const double expected_output[] = {1.863874, 6.319371, 1.704189, 1.999110, 7.814124,
                                      0.273472, 1.992555, 7.479636, 0.735877};
    BOOST_TEST(r.output.shape == (std::vector<std::int64_t>{3, 3}), boost::test_tools::per_element());
    for (int i = 0; i < 9; ++i) BOOST_TEST(std::abs(r.output.data[i] - expected_output[i]) <= 1e-5);
}
