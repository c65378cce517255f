// Every kernel of the registry against the reference interpreter, on shapes that cover B ∈ {1, 3},
// lengths ∈ {1, 7, 64, 129, 1000}, Lq ≠ Lk, fully masked rows (padding, attention masks) and large
// logits, within docs/contract.md §5: max |kernel - interpreter| ≤ 1e-4 · (1 + max |interpreter|)
// + 2·√E·2⁻²⁴·S·V (the rounding of float32 scores, interp::Result::score_rounding). Every variant has
// large-logit cases with non-integer inputs (uniform in ±75 or more, so S reaches ~10³–10⁴ with
// near-ties; integer inputs would round exactly and hide the second term); each checks it reached its S.
// One test case per variant family; every kernel of a variant (each strategy, and its attention
// weights) is run on the same inputs, whatever size class the rule would give it.
#define BOOST_TEST_MODULE kernels
#include <attnforge/dsl/passes/flop_count.hpp>
#include <attnforge/dsl/passes/has_projection.hpp>
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/runtime/reference.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/testing/compare.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <boost/hana/for_each.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace dsl = attnforge::dsl;
namespace runtime = attnforge::runtime;
using InputOptions = attnforge::testing::SyntheticOptions;
using Sizes = attnforge::testing::SyntheticSizes;

namespace {

struct Case {
    Sizes sizes;
    InputOptions options;
    std::string label;
    double min_score_magnitude = 0;  // a large-logit case: the S (contract §5) its inputs must reach
};

// Inputs of seed `seed` given a scale input of `scale` (variants with one; the others ignore it).
InputOptions with_scale(double scale, unsigned seed) {
    InputOptions o;
    o.seed = seed;
    o.scale = scale;
    return o;
}

// Inputs uniform in ±`scale` (activations, heads, caches), weights times `weight_scale`.
InputOptions large_logits(double scale, unsigned seed, double weight_scale = 1.0) {
    InputOptions o;
    o.activation_scale = scale;
    o.seed = seed;
    o.weight_scale = weight_scale;
    return o;
}

// Under sanitizers (tools/sanitize) the kernels are not instrumented: what is checked there is our runtime's handling
// of every kernel's buffers, which the smaller cases exercise as well. The cases whose float64 interpreter run costs
// more than this many FLOPs (L = 1000 and the D = 512 layers at B = 3) run in the plain build only.
#ifdef ATTNFORGE_SANITIZED
constexpr double sanitized_flop_limit = 1e9;
#else
constexpr double sanitized_flop_limit = std::numeric_limits<double>::infinity();
#endif

void check_variant(std::string_view variant, const std::vector<Case>& cases) {
    bool found = false;
    boost::hana::for_each(dsl::builtin_variants, [&](const auto& g) {
        if (g.name.view() != variant) return;
        found = true;
        const auto sig = dsl::signature(g);
        const bool rounds_computed = dsl::has_projection(g);
        // A run-time head width: each kernel serves one E (its line's E list); the cases at other widths are for
        // those. A variant with a static E runs the cases of E = 64 only.
        bool runtime_width = false;
        for (const auto& in : sig.inputs)
            for (const auto& d : in.dims) runtime_width |= d.role == dsl::dim_spec::axis::head_width;
        for (const runtime::KernelEntry& k : runtime::registry())
            if (k.variant == variant && k.head_width)
                BOOST_TEST(std::any_of(cases.begin(), cases.end(),
                                       [&](const Case& c) { return c.sizes.head_width == k.head_width; }),
                           k.name << ": no case at its head width " << k.head_width);
        auto of_width = [&](const Case& c, const runtime::KernelEntry& k) {
            return k.head_width == 0 || k.head_width == c.sizes.head_width;
        };
        // The widths the build made kernels of (ATTNFORGE_HEAD_WIDTHS chooses): a case at another width has none to
        // run.
        auto built_width = [&](std::int64_t E) {
            return std::any_of(
                runtime::registry().begin(), runtime::registry().end(),
                [&](const runtime::KernelEntry& k) { return k.variant == variant && k.head_width == E; });
        };
        for (const Case& c : cases) {
            if (runtime_width ? !built_width(c.sizes.head_width) : c.sizes.head_width != 64) continue;
            const double flops =
                dsl::flop_count(g, {double(c.sizes.batch), double(c.sizes.heads),
                                    [&](std::string_view s) { return double(c.sizes.length.at(std::string(s))); },
                                    double(c.sizes.head_width)});
            if (flops > sanitized_flop_limit) continue;
            // Optional parameters (a window, a cap, slopes) given in every other case, left to their defaults in the
            // rest.
            InputOptions options = c.options;
            options.give_parameters = (&c - cases.data()) % 2 == 1;
            const auto given = attnforge::testing::synthetic_inputs(sig, c.sizes, options);
            // Query length × key length of the case's attention (the product of its sequence lengths).
            std::int64_t pairs = 1;
            for (const auto& [tag, n] : c.sizes.length) pairs *= n;
            for (std::string_view storage : {"float32", "bf16", "fp16"}) {
                // The 16-bit storage types convert where values are read and written, whatever the
                // tiles: every case but the 1000 × 1000-token ones (their interpreter runs are most of the
                // time). Decoding's long caches (few queries) run in every type.
                if (storage != "float32" && pairs >= 1'000'000) continue;
                // bf16/fp16 kernels take the inputs rounded to their type, and the interpreter evaluates
                // those rounded values (docs/contract.md §5).
                const auto inputs = runtime::to_storage(given, runtime::storage_type_named(storage), sig);
                const auto reference = attnforge::interp::evaluate(g, runtime::to_float64(inputs));
                const auto& rounding = reference.score_rounding;
                // A bf16 kernel of a graph with projections rounds their operands (docs/storage_types.md) where its
                // target has bf16 products: the interpreter rounding the same values, for the tight check below.
                const bool rounds = rounds_computed && storage == "bf16";
                const auto rounded_reference =
                    rounds ? attnforge::interp::evaluate(g, runtime::to_float64(inputs),
                                                         {.intermediates = true, .round_projection_operands = true})
                           : attnforge::interp::Result{};
                if (storage == "float32")
                    BOOST_TEST(rounding.largest_score_magnitude >= c.min_score_magnitude,
                               variant << " on " << c.label << ": S = " << rounding.largest_score_magnitude
                                       << ", not the large logits the case is for (" << c.min_score_magnitude << ")");
                for (std::string_view result : {"output", "attention_weights", "logsumexp"}) {
                    auto kernels = runtime::kernels_for(variant, result, storage);
                    std::erase_if(kernels, [&](const runtime::KernelEntry* k) { return !of_width(c, *k); });
                    // Every variant has float32 and bf16 output kernels at each width it lists; float32
                    // attention-weights and log-sum-exp kernels at each width where it has any.
                    const bool listed =
                        result == "output" || std::any_of(runtime::registry().begin(), runtime::registry().end(),
                                                          [&](const runtime::KernelEntry& k) {
                                                              return k.variant == variant && k.result == result;
                                                          });
                    if (listed && (storage == "float32" || (storage == "bf16" && result == "output")))
                        BOOST_TEST(!kernels.empty(), variant << " has no " << result << " kernel in " << storage);
                    if (kernels.empty()) continue;
                    auto result_of = [&](const attnforge::interp::Result& r) -> const attnforge::interp::Tensor& {
                        return result == "output"      ? r.output
                               : result == "logsumexp" ? r.intermediates.at("attention_logsumexp")
                                                       : r.intermediates.at("attention_weights");
                    };
                    const auto& expected = result_of(reference);
                    // The log-sum-exp moves with the scores' rounding as the weights do (V = 1). A kernel that rounds
                    // its projections' operands: plus §5's term for rounded operands.
                    const double bound =
                        attnforge::testing::contract_bound(
                            expected, result == "output" ? rounding.output : rounding.attention_weights, storage) +
                        (rounds ? attnforge::testing::rounded_operands_term(rounding, storage, result == "output")
                                : 0.0);
                    for (const runtime::KernelEntry* k : kernels) {
                        BOOST_TEST_CONTEXT(k->name << " on " << c.label) {
                            const auto got = runtime::to_float64(runtime::run_kernel(*k, inputs));
                            const double error = attnforge::testing::max_abs_diff(got, expected);
                            // A NaN on one side only makes the error +inf, and §5's term can be +inf at S ~ 10⁴.
                            BOOST_TEST(std::isfinite(error));
                            BOOST_TEST(error <= bound);
                            // §5's term grows as e^(4·u·S): at ordinary logits (S of a few units) it allows errors far
                            // beyond a kernel's, so there the kernel must also match, within the plain bf16 bound,
                            // the interpreter rounding what it rounds — or, on a target without bf16 products (the
                            // AVX2 part of a multi-target build), the reference on the inputs alone. (At large
                            // logits a rounding tie the kernel's float32 projection breaks otherwise than the
                            // float64 one moves a logit by units: the contract's bound alone holds there.)
                            if (rounds && c.min_score_magnitude == 0) {
                                const auto& emulated = result_of(rounded_reference);
                                const double emulated_error = attnforge::testing::max_abs_diff(got, emulated);
                                BOOST_TEST(
                                    (emulated_error <= attnforge::testing::contract_bound(emulated, 0, storage) ||
                                     error <= attnforge::testing::contract_bound(expected, 0, storage)),
                                    "error " << emulated_error << " against the interpreter rounding the "
                                             << "projections' operands, " << error << " against it on the "
                                             << "inputs alone: beyond the bf16 bound of both");
                            }
                            if (c.min_score_magnitude > 0 || std::getenv("ATTNFORGE_TEST_VERBOSE"))
                                BOOST_TEST_MESSAGE(k->name << " on " << c.label << ": S "
                                                           << rounding.largest_score_magnitude << ", error " << error
                                                           << " = " << error / bound << " of the bound");
                        }
                    }
                }
            }
            // Kernels whose inputs have types of their own (q float32, k and v bf16): the interpreter on the
            // inputs as those kernels take them, the bound of the kernel's storage type (its arithmetic).
            for (const runtime::KernelEntry& k : runtime::registry()) {
                if (k.variant != variant || k.input_types.empty() || !of_width(c, k)) continue;
                BOOST_TEST_CONTEXT(k.name << " on " << c.label) {
                    const dsl::element_type storage = runtime::storage_type_named(k.storage);
                    const auto inputs = runtime::to_storage(given, storage, k.input_types, sig);
                    const auto reference = attnforge::interp::evaluate(g, runtime::to_float64(inputs));
                    BOOST_TEST(k.result == "output");
                    const double bound = attnforge::testing::contract_bound(reference.output,
                                                                            reference.score_rounding.output, k.storage);
                    // The kernel the runtime picks for inputs given in these types is one of these.
                    BOOST_TEST(!runtime::select_kernel(variant, inputs, "output", k.storage).input_types.empty());
                    const auto got = runtime::to_float64(runtime::run_kernel(k, inputs));
                    BOOST_TEST(attnforge::testing::max_abs_diff(got, reference.output) <= bound);
                }
            }
        }
    });
    BOOST_TEST(found, "no built-in variant " << variant);
}

Sizes heads_sizes(std::int64_t B, std::int64_t H, std::int64_t Lq, std::int64_t Lk) {
    return {B, H, {{"q", Lq}, {"kv", Lk}}};
}
// The sizes at head width E (variants whose E is run-time).
Sizes at_width(std::int64_t E, Sizes s) {
    s.head_width = E;
    return s;
}

// H query heads over Hkv key/value heads (variants whose Hkv is a run-time count).
Sizes gqa_sizes(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Lq, std::int64_t Lk) {
    return {B, H, {{"q", Lq}, {"kv", Lk}}, Hkv};
}

std::vector<Case> sdpa_cases(bool static_heads) {
    const std::int64_t H = 2;
    auto h = [&](std::int64_t n) { return static_heads ? 8 : n; };
    std::vector<Case> cases = {
        {heads_sizes(1, h(H), 1, 1), {}, "B1 L1"},
        {heads_sizes(3, h(H), 7, 7), {}, "B3 L7"},
        {heads_sizes(1, h(3), 64, 64), {}, "B1 L64"},
        {heads_sizes(3, h(1), 129, 129), {}, "B3 L129"},
        {heads_sizes(1, h(H), 1000, 1000), {}, "B1 L1000"},
        {heads_sizes(1, h(H), 7, 129), {}, "B1 Lq7 Lk129"},
        {heads_sizes(3, h(1), 129, 64), {}, "B3 Lq129 Lk64"},
        {heads_sizes(1, h(H), 64, 64), {1.0, true, 7}, "B1 L64 integer logits~1e4"},
        {heads_sizes(1, h(H), 64, 64), large_logits(75, 13), "B1 L64 q,k,v ±75", 1e3},
        {heads_sizes(2, h(H), 129, 300), large_logits(90, 17), "B2 Lq129 Lk300 q,k,v ±90", 5e3},
    };
    // A run-time Hkv (a divisor of H): the head counts of models, Qwen2.5's 14/2, SmolLM's 9/3, MQA's 8/1, Phi's
    // 32/32, query head h reading key/value head h / (H / Hkv).
    if (!static_heads) {
        cases.push_back({gqa_sizes(1, 14, 2, 64, 129), {}, "B1 H14 Hkv2 Lq64 Lk129"});
        cases.push_back({gqa_sizes(2, 9, 3, 7, 64), {1.0, false, 3}, "B2 H9 Hkv3 L7 Lk64"});
        cases.push_back({gqa_sizes(1, 8, 1, 129, 129), large_logits(75, 19), "B1 H8 Hkv1 L129 q,k,v ±75", 1e3});
        cases.push_back({gqa_sizes(1, 32, 32, 33, 40), {}, "B1 H32 Hkv32 Lq33 Lk40"});
        // The scale a call gives (sdpa's scale input; 1/√E where none is given, as in every case above): T5's 1,
        // a negative one, and large logits under a scale of 1.
        InputOptions unit_scale = large_logits(20, 23);
        unit_scale.scale = 1.0;
        cases.push_back({gqa_sizes(1, 4, 2, 64, 129), with_scale(0.3, 29), "B1 H4 Hkv2 Lq64 Lk129 scale 0.3"});
        cases.push_back({heads_sizes(2, 2, 7, 64), with_scale(-0.05, 31), "B2 L7 Lk64 scale -0.05"});
        cases.push_back({heads_sizes(1, 2, 64, 64), unit_scale, "B1 L64 q,k,v ±20 scale 1", 1e3});
        // Run-time head widths (the E lists of generated/kernels.list): each width's kernels on partial tiles, GQA
        // and large logits (variants with a static E skip these).
        for (std::int64_t E : {80, 96, 128, 256}) {
            const std::string e = " E" + std::to_string(E);
            cases.push_back({at_width(E, gqa_sizes(2, 3, 1, 7, 64)), {}, "B2 H3 Hkv1 Lq7 Lk64" + e});
            cases.push_back({at_width(E, gqa_sizes(1, 4, 2, 129, 300)), {1.0, false, 5}, "B1 H4 Hkv2 Lq129 Lk300" + e});
            cases.push_back(
                {at_width(E, heads_sizes(1, 2, 64, 64)), large_logits(75, 13), "B1 L64 q,k,v ±75" + e, 1e3});
        }
    }
    return cases;
}

// Large logits: x in ±75 through weights of ±2/√D; behind a LayerNorm (layer_norm), which undoes x's
// scale, weights 45 times larger instead.
std::vector<Case> layer_cases(bool layer_norm = false) {
    auto s = [](std::int64_t B, std::int64_t L) { return Sizes{B, 0, {{"x", L}}}; };
    const auto large = [&](unsigned seed) { return layer_norm ? large_logits(1, seed, 45) : large_logits(75, seed); };
    return {{s(1, 1), {}, "B1 L1"},
            {s(3, 7), {}, "B3 L7"},
            {s(1, 64), {}, "B1 L64"},
            {s(3, 129), {}, "B3 L129"},
            {s(1, 1000), {}, "B1 L1000"},
            {s(1, 64), large(13), "B1 L64 large logits", 1e3},
            {s(2, 129), large(17), "B2 L129 large logits", 1e3}};
}

// Self-attention over one sequence "tokens" (Lq = Lk), with what predicates read (document ids, prefix
// lengths) synthesized as indices: packed documents of about L/4 tokens, prefix lengths in [0, L].
std::vector<Case> token_cases() {
    auto s = [](std::int64_t B, std::int64_t H, std::int64_t L) { return Sizes{B, H, {{"tokens", L}}}; };
    return {{s(1, 2, 1), {}, "B1 L1"},
            {s(3, 2, 7), {}, "B3 L7"},
            {s(1, 3, 64), {}, "B1 L64"},
            {s(3, 1, 129), {}, "B3 L129"},
            {s(1, 2, 1000), {}, "B1 L1000"},
            {s(3, 2, 300), {1.0, false, 11}, "B3 L300 seed 11"},
            {s(1, 2, 64), large_logits(75, 13), "B1 L64 q,k,v ±75", 1e3},
            {s(2, 2, 129), large_logits(90, 17), "B2 L129 q,k,v ±90", 5e3}};
}

// Decoding over a cache of Lmax slots: Lq = 1 and 4 (and 7 > some lengths), the first entry's cache
// full, the second's empty (zero rows), the others random lengths (testing/synthetic_inputs.hpp); caches
// of up to 1000 slots (one split of keys) and of 9000 (several).
std::vector<Case> decode_cases(bool static_heads) {
    auto s = [&](std::int64_t B, std::int64_t H, std::int64_t Lq, std::int64_t Lmax) {
        return Sizes{B, static_heads ? 0 : H, {{"q", Lq}, {"kv", Lmax}}};
    };
    std::vector<Case> cases = {
        {s(1, 2, 1, 1), {}, "B1 Lq1 Lmax1"},
        {s(3, 2, 1, 129), {}, "B3 Lq1 Lmax129"},
        {s(3, 2, 4, 300), {}, "B3 Lq4 Lmax300"},
        {s(1, 3, 4, 1000), {}, "B1 Lq4 Lmax1000"},
        {s(4, 1, 7, 64), {1.0, false, 5}, "B4 Lq7 Lmax64"},
        {s(5, 2, 1, 1000), {1.0, false, 9}, "B5 Lq1 Lmax1000"},
        {s(3, 2, 4, 300), large_logits(75, 13), "B3 Lq4 Lmax300 q,k,v ±75", 1e3},
        {s(2, 2, 1, 129), large_logits(90, 17), "B2 Lq1 Lmax129 q,k,v ±90", 5e3},
        // Caches longer than a split of keys (split_keys 2048, and 8192 for the long-cache classes; every
        // kernel runs every case): several splits per row, each with its own maximum, merged by their
        // log-sum-exp (lower/decode.hpp). The first entry's 9000 keys take 5 and 2 splits, the third entry's
        // random length its own count.
        {s(3, 2, 4, 9000), {1.0, false, 23}, "B3 Lq4 Lmax9000 (several key splits)"},
        {s(3, 1, 1, 9000), large_logits(75, 29), "B3 Lq1 Lmax9000 (several key splits) q,k,v ±75", 1e3}};
    // A run-time Hkv: every query head of a group reads its key/value head's cache.
    if (!static_heads) {
        auto g = [](std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Lq, std::int64_t Lmax) {
            return Sizes{B, H, {{"q", Lq}, {"kv", Lmax}}, Hkv};
        };
        cases.push_back({g(2, 14, 2, 4, 300), {}, "B2 H14 Hkv2 Lq4 Lmax300"});
        cases.push_back({g(3, 9, 3, 1, 1000), {1.0, false, 31}, "B3 H9 Hkv3 Lq1 Lmax1000"});
        cases.push_back(
            {g(2, 8, 1, 1, 4500), large_logits(75, 37), "B2 H8 Hkv1 Lq1 Lmax4500 (key splits) q,k,v ±75", 1e3});
        cases.push_back({g(1, 32, 32, 1, 129), {}, "B1 H32 Hkv32 Lq1 Lmax129"});
        cases.push_back({g(2, 4, 1, 4, 300), with_scale(0.3, 47), "B2 H4 Hkv1 Lq4 Lmax300 scale 0.3"});
        for (std::int64_t E : {80, 96, 128, 256}) {
            const std::string e = " E" + std::to_string(E);
            cases.push_back({at_width(E, g(3, 4, 2, 4, 300)), {}, "B3 H4 Hkv2 Lq4 Lmax300" + e});
            cases.push_back(
                {at_width(E, g(2, 2, 1, 1, 4500)), {1.0, false, 41}, "B2 H2 Hkv1 Lq1 Lmax4500 (key splits)" + e});
            cases.push_back(
                {at_width(E, g(2, 2, 2, 1, 129)), large_logits(75, 43), "B2 Lq1 Lmax129 q,k,v ±75" + e, 1e3});
        }
    }
    return cases;
}

// PyTorch's attn_mask (B or 1, H or 1, Lq, Lk): the cases of sdpa or decode (run at the widths those variants'
// kernels have), the mask in turn full, broadcast over the batch, over the heads, over both. Its synthetic values
// remove about a third of the pairs, one whole row, and the second half of the keys of the last (batch, head)
// slice (whole key tiles for the pre-pass to skip at L = 1000 and past).
std::vector<Case> torch_mask_cases(std::vector<Case> cases) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
        cases[i].sizes.mask_one_batch = i % 2 == 1;
        cases[i].sizes.mask_one_head = i % 4 >= 2;
        cases[i].label += std::string(" mask (") + (i % 2 == 1 ? "1" : "B") + ", " + (i % 4 >= 2 ? "1" : "H") + ")";
    }
    return cases;
}

// Queries from x (Lq), keys and values from memory (Lk).
Sizes memory_sizes(std::int64_t B, std::int64_t Lq, std::int64_t Lk) {
    return Sizes{B, 0, {{"x", Lq}, {"memory", Lk}}};
}

}  // namespace

// Every variant in the kernel list has its test case below (and its CTest line in tests/CMakeLists.txt).
const std::vector<std::string_view> tested_variants = {"seed_attention",
                                                       "sdpa",
                                                       "sdpa_causal",
                                                       "sliding_window_attention",
                                                       "softcap_attention",
                                                       "softcap_sliding_window_attention",
                                                       "masked_attention",
                                                       "alibi_attention",
                                                       "mha",
                                                       "mha_causal",
                                                       "mha_padding",
                                                       "mha_causal_padding",
                                                       "mha_bias",
                                                       "gqa",
                                                       "self_attention_layer",
                                                       "positional_self_attention_layer",
                                                       "cross_attention",
                                                       "mqa",
                                                       "prefix_lm_attention",
                                                       "document_attention",
                                                       "relative_position_attention",
                                                       "rope_attention",
                                                       "decoder_layer",
                                                       "decode",
                                                       "decode_gqa",
                                                       "decode_sliding_window",
                                                       "decode_rope",
                                                       "decode_softcap",
                                                       "sdpa_masked",
                                                       "sdpa_additive",
                                                       "sdpa_causal_masked",
                                                       "decode_masked",
                                                       "softcap_masked",
                                                       "decode_softcap_masked",
                                                       "decode_u8",
                                                       "decode_i8",
                                                       "decode_i8_g32",
                                                       "decode_u8_kc128"};

BOOST_AUTO_TEST_CASE(every_listed_variant_is_tested) {
    for (std::string_view v : runtime::variants())
        BOOST_TEST((std::find(tested_variants.begin(), tested_variants.end(), v) != tested_variants.end()),
                   "generated/kernels.list has " << v << " but tests/kernels has no case for it");
}

BOOST_AUTO_TEST_CASE(seed_attention) {
    std::vector<Case> cases;
    for (std::int64_t L : {1, 7, 64, 129}) cases.push_back({Sizes{1, 0, {{"x", L}}}, {}, "L" + std::to_string(L)});
    cases.push_back({Sizes{1, 0, {{"x", 129}}}, large_logits(75, 13), "L129 large logits", 1e3});
    check_variant("seed_attention", cases);
}

BOOST_AUTO_TEST_CASE(sdpa) {
    check_variant("sdpa", sdpa_cases(false));
}
BOOST_AUTO_TEST_CASE(sdpa_causal) {
    check_variant("sdpa_causal", sdpa_cases(false));
}
BOOST_AUTO_TEST_CASE(sliding_window_attention) {
    check_variant("sliding_window_attention", sdpa_cases(false));
}
BOOST_AUTO_TEST_CASE(softcap_attention) {
    check_variant("softcap_attention", sdpa_cases(false));
}
BOOST_AUTO_TEST_CASE(softcap_sliding_window_attention) {  // kernels for E = 256 (Gemma-2's) only
    check_variant("softcap_sliding_window_attention", sdpa_cases(false));
}
BOOST_AUTO_TEST_CASE(masked_attention) {
    check_variant("masked_attention", sdpa_cases(false));
}
BOOST_AUTO_TEST_CASE(alibi_attention) {
    check_variant("alibi_attention", sdpa_cases(false));
}
// L = 1000 reaches past the table's ±128 distances: the clipped entries.
BOOST_AUTO_TEST_CASE(relative_position_attention) {
    check_variant("relative_position_attention", sdpa_cases(true));
}
BOOST_AUTO_TEST_CASE(rope_attention) {
    check_variant("rope_attention", sdpa_cases(false));
}
BOOST_AUTO_TEST_CASE(prefix_lm_attention) {
    check_variant("prefix_lm_attention", token_cases());
}
BOOST_AUTO_TEST_CASE(document_attention) {
    check_variant("document_attention", token_cases());
}

BOOST_AUTO_TEST_CASE(mha) {
    check_variant("mha", layer_cases());
}
BOOST_AUTO_TEST_CASE(mha_causal) {
    check_variant("mha_causal", layer_cases());
}
BOOST_AUTO_TEST_CASE(mha_padding) {
    check_variant("mha_padding", layer_cases());
}
BOOST_AUTO_TEST_CASE(mha_bias) {
    check_variant("mha_bias", layer_cases());
}
BOOST_AUTO_TEST_CASE(mha_causal_padding) {
    check_variant("mha_causal_padding", layer_cases());
}
BOOST_AUTO_TEST_CASE(gqa) {
    check_variant("gqa", layer_cases());
}
BOOST_AUTO_TEST_CASE(self_attention_layer) {
    check_variant("self_attention_layer", layer_cases(true));
}
BOOST_AUTO_TEST_CASE(positional_self_attention_layer) {
    check_variant("positional_self_attention_layer", layer_cases(true));
}
BOOST_AUTO_TEST_CASE(mqa) {
    check_variant("mqa", layer_cases());
}

BOOST_AUTO_TEST_CASE(cross_attention) {
    const auto s = memory_sizes;
    check_variant("cross_attention", {{s(1, 1, 7), {}, "B1 Lq1 Lk7"},
                                      {s(3, 7, 129), {}, "B3 Lq7 Lk129"},
                                      {s(1, 129, 64), {}, "B1 Lq129 Lk64"},
                                      {s(1, 1000, 129), {}, "B1 Lq1000 Lk129"},
                                      {s(2, 129, 300), large_logits(75, 13), "B2 Lq129 Lk300 large logits", 1e3}});
}

BOOST_AUTO_TEST_CASE(decode) {
    check_variant("decode", decode_cases(false));
}
BOOST_AUTO_TEST_CASE(decode_gqa) {
    check_variant("decode_gqa", decode_cases(true));
}
BOOST_AUTO_TEST_CASE(decode_sliding_window) {
    check_variant("decode_sliding_window", decode_cases(false));
}
BOOST_AUTO_TEST_CASE(decode_rope) {
    check_variant("decode_rope", decode_cases(false));
}
BOOST_AUTO_TEST_CASE(decode_softcap) {  // kernels for E = 256 (Gemma-2's) only
    check_variant("decode_softcap", decode_cases(false));
}
// A uint8 cache quantized by token (variants/quantized_decode.hpp): any codes, scales and zero points (the synthetic
// inputs), against the interpreter on the dequantized cache (docs/contract.md §5: the float32 bound, or the 16-bit
// one for bf16 queries and output).
BOOST_AUTO_TEST_CASE(decode_u8) {
    check_variant("decode_u8", decode_cases(false));
}
// Symmetric int8 caches: a scale per token, or per 32 channels (kernels at the widths that are multiples of 32).
BOOST_AUTO_TEST_CASE(decode_i8) {
    check_variant("decode_i8", decode_cases(false));
}
BOOST_AUTO_TEST_CASE(decode_i8_g32) {
    check_variant("decode_i8_g32", decode_cases(false));
}
// uint8 keys by channel of blocks of 128 tokens (scales and zero points (B, Hkv, ⌈Lmax/128⌉, E)): the caches of 1,
// 129, 300, 1000, 4500 and 9000 slots end in a partial block.
BOOST_AUTO_TEST_CASE(decode_u8_kc128) {
    check_variant("decode_u8_kc128", decode_cases(false));
}
BOOST_AUTO_TEST_CASE(sdpa_masked) {
    check_variant("sdpa_masked", torch_mask_cases(sdpa_cases(false)));
}
BOOST_AUTO_TEST_CASE(sdpa_additive) {
    check_variant("sdpa_additive", torch_mask_cases(sdpa_cases(false)));
}
BOOST_AUTO_TEST_CASE(sdpa_causal_masked) {
    check_variant("sdpa_causal_masked", torch_mask_cases(sdpa_cases(false)));
}
BOOST_AUTO_TEST_CASE(decode_masked) {
    check_variant("decode_masked", torch_mask_cases(decode_cases(false)));
}
BOOST_AUTO_TEST_CASE(softcap_masked) {  // kernels for E = 256 (Gemma-2's) only
    check_variant("softcap_masked", torch_mask_cases(sdpa_cases(false)));
}
BOOST_AUTO_TEST_CASE(decode_softcap_masked) {  // kernels for E = 256 only
    check_variant("decode_softcap_masked", torch_mask_cases(decode_cases(false)));
}

// Masked self-attention, then cross-attention to memory with its padding masked (a fully padded
// memory entry where B > 1: the cross-attention rows are zero and the layer gives h).
BOOST_AUTO_TEST_CASE(decoder_layer) {
    const auto s = memory_sizes;
    check_variant("decoder_layer", {{s(1, 1, 7), {}, "B1 Lq1 Lk7"},
                                    {s(3, 7, 129), {}, "B3 Lq7 Lk129"},
                                    {s(1, 129, 64), {}, "B1 Lq129 Lk64"},
                                    {s(2, 300, 100), {}, "B2 Lq300 Lk100"},
                                    {s(2, 129, 64), large_logits(1, 13, 45), "B2 Lq129 Lk64 large logits", 1e3}});
}
