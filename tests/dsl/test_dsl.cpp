// The DSL's compile-time results: kinds inferred for the built-in variants, input collection and
// order, node labels, captured expressions and their canonical text.
#define BOOST_TEST_MODULE dsl
#include <attnforge/dsl.hpp>
#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/errors.hpp>

#include <boost/hana/size.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>

namespace dsl = attnforge::dsl;
namespace ex = attnforge::dsl::ex;
namespace hana = boost::hana;
namespace v = attnforge::dsl::variants;

// Kinds are inferred at compile time.
static_assert(std::is_same_v<decltype(v::mha)::output_kind, dsl::activation_kind<"x", 512, true>>);
static_assert(std::is_same_v<decltype(v::sdpa)::output_kind,
                             dsl::heads_kind<"q", dsl::runtime_heads, dsl::runtime_head_width, true>>);
static_assert(std::is_same_v<decltype(v::cross_attention)::output_kind, dsl::activation_kind<"x", 512, true>>);
static_assert(std::is_same_v<decltype(v::seed_attention)::output_kind, dsl::activation_kind<"x", 3, false>>);
static_assert(
    std::is_same_v<decltype(v::alibi_attention)::output_kind, dsl::heads_kind<"q", dsl::runtime_heads, 64, true>>);
static_assert(decltype(dsl::split_heads<2>(dsl::linear(v::x512, dsl::weight<"wk", 512, 128>())))::kind::head_width ==
              64);
static_assert(decltype(hana::size(dsl::collect_inputs(v::self_attention_layer)))::value == 7);
static_assert(decltype(hana::size(dsl::builtin_variants))::value == 38);
static_assert(dsl::cat("a", dsl::fixed_string("bc"), dsl::int_string<-120>()) == dsl::fixed_string("abc-120"));
static_assert(decltype(v::gqa.output)::label ==
              dsl::fixed_string("linear(merge_heads(weighted_sum(softmax(score(split_heads(linear(x, wq), H=8), "
                                "split_heads(linear(x, wk), H=2))), split_heads(linear(x, wv), H=2))), wo)"));

// Where an attention reads K and V (kv_source.hpp): dense rows of the K and V nodes; a cache's lengths say
// which rows hold keys, for keys and values alike.
constexpr auto sdpa_pattern = dsl::match_attention(v::sdpa.output);
constexpr auto decode_pattern = dsl::match_attention(v::decode.output);
using SdpaKeys = decltype(sdpa_pattern.key_source());
using DecodeValues = decltype(decode_pattern.value_source());
static_assert(std::is_same_v<SdpaKeys, dsl::kv_source<dsl::dense_rows<std::decay_t<decltype(v::sdpa_k)>>, dsl::every_row>>);
static_assert(!SdpaKeys::cached && DecodeValues::cached);
static_assert(std::is_same_v<DecodeValues, dsl::kv_source<dsl::dense_rows<std::decay_t<decltype(v::sdpa_v)>>, std::decay_t<decltype(v::kv_length)>>>);
static_assert(std::is_same_v<decltype(dsl::match_attention(v::gqa.output.x.x).key_source().rows.node),
                             decltype(dsl::match_attention(v::gqa.output.x.x).score.k)>);
static_assert(std::is_same_v<SdpaKeys::kind, decltype(v::sdpa_k)::kind>);

// A quantized cache (nodes/dequantize.hpp) is read as its codes with their scales, not as a dense tensor.
constexpr auto decode_u8_pattern = dsl::match_attention(v::decode_u8.output);
using QuantizedKeys = decltype(decode_u8_pattern.key_source());
static_assert(std::is_same_v<QuantizedKeys::kind, decltype(v::sdpa_k)::kind>);
static_assert(QuantizedKeys::cached);
static_assert(std::is_same_v<decltype(QuantizedKeys::rows),
                             dsl::quantized_rows<std::decay_t<decltype(decode_u8_pattern.score.k.codes)>,
                                                 std::decay_t<decltype(decode_u8_pattern.score.k.scale)>,
                                                 std::decay_t<decltype(decode_u8_pattern.score.k.zero)>>>);
// Symmetric int8 codes with a scale per 32 channels: rows of codes and scales, no zero point.
constexpr auto decode_i8_g32_pattern = dsl::match_attention(v::decode_i8_g32.output);
using GroupedKeys = decltype(decode_i8_g32_pattern.key_source());
static_assert(std::is_same_v<decltype(GroupedKeys::rows),
                             dsl::quantized_rows<std::decay_t<decltype(decode_i8_g32_pattern.score.k.codes)>,
                                                 std::decay_t<decltype(decode_i8_g32_pattern.score.k.scale)>>>);
static_assert(std::decay_t<decltype(decode_i8_g32_pattern.score.k)>::symmetric &&
              std::decay_t<decltype(decode_i8_g32_pattern.score.k)>::group == 32);
// uint8 keys by channel of blocks of 128 tokens, values by token.
constexpr auto decode_u8_kc128_pattern = dsl::match_attention(v::decode_u8_kc128.output);
static_assert(std::decay_t<decltype(decode_u8_kc128_pattern.score.k)>::by_channel &&
              std::decay_t<decltype(decode_u8_kc128_pattern.score.k)>::token_block == 128 &&
              !std::decay_t<decltype(decode_u8_kc128_pattern.score.k)>::symmetric);
static_assert(!std::decay_t<decltype(decode_u8_kc128_pattern.values)>::by_channel);

// A rows type of its own, declared beside its node, is picked without touching kv_source.hpp.
namespace custom {
struct pages_node {
    using kind = decltype(v::sdpa_k)::kind;
};
struct paged_rows {
    using tag = dsl::kv_rows_tag;
    using kind = pages_node::kind;
    pages_node node;
};
constexpr paged_rows rows_of(const pages_node& n) { return {n}; }
}  // namespace custom
static_assert(std::is_same_v<decltype(dsl::kv_source_of(custom::pages_node{}, dsl::every_row{})),
                             dsl::kv_source<custom::paged_rows, dsl::every_row>>);

BOOST_AUTO_TEST_CASE(a_cache_source_reads_the_lengths_input) {
    BOOST_TEST(std::string(decltype(decode_pattern.key_source().valid)::label.view()) == "kv_length");
}

BOOST_AUTO_TEST_CASE(inputs_are_collected_once_in_order_of_first_use) {
    auto names = [](const auto& g) {
        std::vector<std::string> out;
        for (const auto& in : dsl::signature(g).inputs) out.push_back(in.name);
        return out;
    };
    BOOST_TEST(names(v::mha) == (std::vector<std::string>{"x", "wq", "wk", "wv", "wo"}),
               boost::test_tools::per_element());
    BOOST_TEST(names(v::cross_attention) == (std::vector<std::string>{"x", "wq", "memory", "wk", "wv", "wo"}),
               boost::test_tools::per_element());
    BOOST_TEST(names(v::mha_padding) == (std::vector<std::string>{"x", "wq", "wk", "key_padding_mask", "wv", "wo"}),
               boost::test_tools::per_element());
}

// Inputs read inside predicates and modifiers are inputs of the graph, once, where first used.
BOOST_AUTO_TEST_CASE(inputs_read_by_expressions_are_graph_inputs) {
    auto names = [](const auto& g) {
        std::vector<std::string> out;
        for (const auto& in : dsl::signature(g).inputs) out.push_back(in.name + in.shape_symbol());
        return out;
    };
    BOOST_TEST(names(v::document_attention) ==
                   (std::vector<std::string>{"q(B, H, L[tokens], 64)", "k(B, H, L[tokens], 64)",
                                             "document_ids(B, L[tokens])", "v(B, H, L[tokens], 64)"}),
               boost::test_tools::per_element());
    BOOST_TEST(names(v::prefix_lm_attention)[2] == "prefix_length(B)");
    // Index inputs are int32; a cache's lengths are bounded by the cache's size.
    BOOST_TEST((dsl::signature(v::document_attention).inputs[2].dtype == dsl::element_type::int32));
    const auto decode = dsl::signature(v::decode);
    BOOST_TEST(decode.inputs.size() == 5u);  // q, k, scale (optional), kv_length, v
    BOOST_TEST(decode.inputs[2].name + decode.inputs[2].shape_symbol() == "scale()");
    BOOST_TEST(decode.inputs[3].name + decode.inputs[3].shape_symbol() == "kv_length(B)");
    BOOST_TEST((decode.inputs[3].dtype == dsl::element_type::int32));
    BOOST_TEST(decode.inputs[3].values_bounded_by == "kv");
    BOOST_TEST(dsl::canonical(v::decode).find("kv_cache(kv_length)") != std::string::npos, dsl::canonical(v::decode));
    BOOST_TEST(names(v::relative_position_attention)[2] == "relative_bias(8, 257)");
    const std::string text = dsl::canonical(v::relative_position_attention);
    BOOST_TEST(text.find("relative_bias[h, (min(max((kv_idx - q_idx), -128), 128) + 128)]") != std::string::npos, text);
    BOOST_TEST(dsl::canonical(v::rope_attention).find("rope(q:heads(H=0, L[q], E=64), base=10000)") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(signatures_give_shapes_and_dtypes) {
    const auto sig = dsl::signature(v::mha_padding);
    BOOST_TEST(sig.inputs[0].shape_symbol() == "(B, L[x], 512)");
    BOOST_TEST(sig.inputs[3].shape_symbol() == "(B, L[x])");
    BOOST_TEST((sig.inputs[3].dtype == dsl::element_type::boolean));
    BOOST_TEST(sig.output.shape_symbol() == "(B, L[x], 512)");
    BOOST_TEST(dsl::signature(v::sdpa).inputs[1].shape_symbol() == "(B, Hkv, L[kv], E)");
    BOOST_TEST(dsl::signature(v::cross_attention).inputs[2].shape_symbol() == "(B, L[memory], 512)");
}

BOOST_AUTO_TEST_CASE(lambdas_are_captured_as_expressions) {
    const auto window = dsl::sliding_window(128);
    BOOST_TEST(ex::to_string(window.expr) == "((q_idx >= kv_idx) && ((q_idx - kv_idx) <= 128))");
    static_assert(decltype(window.expr)::type == ex::value_type::boolean);

    const auto alibi = dsl::alibi<8>()(ex::score_placeholder, ex::b_placeholder, ex::h_placeholder,
                                       ex::q_idx_placeholder, ex::kv_idx_placeholder);
    BOOST_TEST(ex::to_string(alibi) == "(score - (exp2(((h + 1) * -1)) * abs((q_idx - kv_idx))))");
    static_assert(!ex::checks<decltype(alibi)>::uses<ex::var_id::b>);
    static_assert(ex::checks<decltype(alibi)>::uses<ex::var_id::h>);

    // A predicate of our own, FlexAttention style.
    const auto prefix_lm =
        dsl::predicate([](auto, auto, auto q_idx, auto kv_idx) { return kv_idx <= q_idx || kv_idx < 4; });
    BOOST_TEST(ex::to_string(prefix_lm.expr) == "((kv_idx <= q_idx) || (kv_idx < 4))");
}

BOOST_AUTO_TEST_CASE(built_in_parameters_default_to_their_former_constants) {
    // sliding_window_attention's window, softcap_attention's cap and alibi_attention's slopes are run-time inputs a
    // call may leave out: 128, 20 and 2^(-8(h+1)/H) for the call's H.
    auto spec_of = [](const dsl::graph_signature& sig, std::string_view name) {
        return *std::find_if(sig.inputs.begin(), sig.inputs.end(), [&](const auto& in) { return in.name == name; });
    };
    const auto window = spec_of(dsl::signature(v::sliding_window_attention), "window");
    BOOST_TEST(window.optional());
    BOOST_TEST((window.dtype == dsl::element_type::int32));
    BOOST_TEST(dsl::default_input_values(dsl::signature(v::sliding_window_attention), window, {}) ==
               std::vector<double>{128});
    const auto cap = spec_of(dsl::signature(v::softcap_attention), "cap");
    BOOST_TEST((cap.dtype == dsl::element_type::float32));
    BOOST_TEST(dsl::default_input_values(dsl::signature(v::softcap_attention), cap, {}) == std::vector<double>{20});
    const auto sig = dsl::signature(v::alibi_attention);
    const auto slopes = spec_of(sig, "slopes");
    BOOST_TEST(slopes.shape_symbol() == "(H)");
    dsl::RuntimeSizes sizes;
    sizes.heads = 4;
    BOOST_TEST(dsl::default_input_values(sig, slopes, sizes) ==
               (std::vector<double>{0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256}));
    BOOST_CHECK_THROW(dsl::default_input_values(sig, slopes, {}), attnforge::input_error);  // H not known
}

BOOST_AUTO_TEST_CASE(scale_defaults_to_one_over_sqrt_e) {
    // sdpa's scale is a run-time input, optional: 1/√E of the call's E where none is given.
    const auto& s = v::sdpa.output.probabilities.scores;
    static_assert(std::decay_t<decltype(s)>::runtime_scale);
    const auto sig = dsl::signature(v::sdpa);
    const auto scale =
        std::find_if(sig.inputs.begin(), sig.inputs.end(), [](const auto& in) { return in.name == "scale"; });
    BOOST_REQUIRE(scale != sig.inputs.end());
    BOOST_TEST(scale->optional());
    BOOST_TEST(scale->dims.empty());
    dsl::RuntimeSizes sizes;
    sizes.head_width = 256;
    BOOST_TEST(dsl::default_input_values(sig, *scale, sizes) == std::vector<double>{0.0625});
    BOOST_CHECK_THROW(dsl::default_input_values(sig, *scale, {}), attnforge::input_error);  // E not known
    BOOST_TEST(!sig.inputs.front().optional());
    BOOST_CHECK_THROW(dsl::default_input_values(sig, sig.inputs.front(), sizes), attnforge::input_error);
    BOOST_TEST(dsl::score(v::q64, v::k64).effective_scale() == 0.125);
    BOOST_TEST(dsl::score(v::sdpa_q, v::sdpa_k, 0.5).effective_scale() == 0.5);
}
