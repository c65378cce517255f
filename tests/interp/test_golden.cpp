// The interpreter against the independent NumPy float64 oracle (tests/golden/make_golden.py), for
// every built-in variant on every committed case (at least two shapes each, and a large-logit case with
// non-integer inputs each), within 1e-9 relative.
#define BOOST_TEST_MODULE interp_golden
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/testing/compare.hpp>
#include <attnforge/testing/golden_case.hpp>

#include <boost/hana/for_each.hpp>
#include <boost/hana/size.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>

namespace {

const std::filesystem::path golden_root = ATTNFORGE_GOLDEN_DIR;
constexpr double relative_tolerance = 1e-9;

}  // namespace

BOOST_AUTO_TEST_CASE(every_builtin_variant_matches_the_numpy_oracle) {
    int variants = 0;
    boost::hana::for_each(attnforge::dsl::builtin_variants, [&](const auto& graph) {
        const std::string variant(graph.name.view());
        const auto dirs = attnforge::testing::golden_case_dirs(golden_root, variant);
        BOOST_TEST_CONTEXT("variant " << variant) {
            BOOST_TEST(dirs.size() >= 2u, "every built-in variant needs golden cases on two shapes");
            BOOST_TEST(std::any_of(dirs.begin(), dirs.end(),
                                   [](const auto& d) { return d.filename().string().ends_with("_large_logits"); }),
                       "every built-in variant needs a large-logit golden case (docs/contract.md §5)");
            for (const auto& dir : dirs) {
                const auto c = attnforge::testing::load_golden_case(dir);
                BOOST_TEST_CONTEXT("case " << c.name) {
                    const auto result = attnforge::interp::evaluate(graph, c.inputs);
                    // The large-logit cases (docs/contract.md §5) must reach scores of 10³ and more.
                    if (c.name.ends_with("_large_logits"))
                        BOOST_TEST(result.score_rounding.largest_score_magnitude >= 1e3);
                    const double bound =
                        relative_tolerance * std::max(1.0, attnforge::testing::max_abs(c.expected_output));
                    BOOST_TEST(attnforge::testing::max_abs_diff(result.output, c.expected_output) <= bound);
                    if (c.expected_attention_weights) {
                        BOOST_TEST(attnforge::testing::max_abs_diff(result.intermediates.at("attention_weights"),
                                                                    *c.expected_attention_weights) <=
                                   relative_tolerance);
                    }
                }
            }
        }
        ++variants;
    });
    BOOST_TEST(variants == static_cast<int>(decltype(boost::hana::size(attnforge::dsl::builtin_variants))::value));
}
