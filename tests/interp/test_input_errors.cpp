// Bad inputs to the interpreter: each is an attnforge::input_error whose message names the input and
// what was expected and given.
#define BOOST_TEST_MODULE interp_input_errors
#include <attnforge/errors.hpp>
#include <attnforge/interp/interpreter.hpp>

#include <boost/test/unit_test.hpp>

namespace dsl = attnforge::dsl;
namespace interp = attnforge::interp;

namespace {

interp::TensorMap sdpa_inputs(std::int64_t Lk_v = 5) {
    return {{"q", interp::Tensor({2, 8, 4, 64})},
            {"k", interp::Tensor({2, 8, 5, 64})},
            {"v", interp::Tensor({2, 8, Lk_v, 64})}};
}

std::string error_of(const interp::TensorMap& inputs) {
    try {
        interp::evaluate(dsl::variants::sdpa, inputs);
    } catch (const attnforge::input_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(missing_input_is_named) {
    auto in = sdpa_inputs();
    in.erase("k");
    BOOST_TEST(error_of(in) ==
               "sdpa: missing input 'k' of shape (B=2, Hkv, L[kv], E=64); it takes "
               "q(B, H, L[q], E), k(B, Hkv, L[kv], E), scale() (optional), v(B, Hkv, L[kv], E)");
}

BOOST_AUTO_TEST_CASE(extra_input_is_named) {
    auto in = sdpa_inputs();
    in["bias"] = interp::Tensor({1});
    BOOST_TEST(error_of(in).starts_with("sdpa: unexpected input 'bias'"));
}

BOOST_AUTO_TEST_CASE(wrong_static_width_names_both_shapes) {
    auto in = sdpa_inputs();
    in["k"] = interp::Tensor({2, 8, 5, 32});
    BOOST_TEST(error_of(in) == "sdpa: input 'k' must have shape (B=2, Hkv, L[kv], E=64), given (2, 8, 5, 32)");
}

BOOST_AUTO_TEST_CASE(inconsistent_runtime_sizes_are_caught) {
    BOOST_TEST(error_of(sdpa_inputs(6)) ==
               "sdpa: input 'v' must have shape (B=2, Hkv=8, L[kv]=5, E=64), given (2, 8, 6, 64)");
    auto in = sdpa_inputs();
    in["k"] = interp::Tensor({3, 8, 5, 64});
    BOOST_TEST(error_of(in) == "sdpa: input 'k' must have shape (B=2, Hkv, L[kv], E=64), given (3, 8, 5, 64)");
}

BOOST_AUTO_TEST_CASE(kv_heads_must_divide_the_query_heads) {
    interp::TensorMap in = {{"q", interp::Tensor({2, 9, 5, 64})},
                            {"k", interp::Tensor({2, 2, 5, 64})},
                            {"v", interp::Tensor({2, 2, 5, 64})}};
    BOOST_TEST(error_of(in) ==
               "sdpa: the queries' head count H=9 must be a multiple of the keys' and values' head count "
               "Hkv=2 (MHA: Hkv = H; GQA: H / Hkv query heads share each; MQA: Hkv = 1)");
    in["k"] = interp::Tensor({2, 3, 5, 64});
    BOOST_TEST(error_of(in) == "sdpa: input 'v' must have shape (B=2, Hkv=3, L[kv]=5, E=64), given (2, 2, 5, 64)");
    in["v"] = interp::Tensor({2, 3, 5, 64});
    BOOST_TEST(interp::evaluate(dsl::variants::sdpa, in).output.shape == (std::vector<std::int64_t>{2, 9, 5, 64}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(wrong_rank_is_caught) {
    auto in = sdpa_inputs();
    in["q"] = interp::Tensor({8, 4, 64});
    BOOST_TEST(error_of(in) == "sdpa: input 'q' must have shape (B, H, L[q], E), given (8, 4, 64)");
}

BOOST_AUTO_TEST_CASE(empty_sizes_give_empty_outputs) {
    interp::TensorMap in = {{"q", interp::Tensor({2, 8, 0, 64})},
                            {"k", interp::Tensor({2, 8, 0, 64})},
                            {"v", interp::Tensor({2, 8, 0, 64})}};
    const auto r = interp::evaluate(dsl::variants::sdpa, in);
    BOOST_TEST(r.output.shape == (std::vector<std::int64_t>{2, 8, 0, 64}), boost::test_tools::per_element());
}
