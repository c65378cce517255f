// The runtime API: the rule picks kernels by size class, every entry checks names, shapes, dtypes and
// sizes before touching memory (errors name the input and both shapes), the thread count is
// selectable per call without changing results, empty sizes give empty outputs, outputs can be reused
// and kernel scratch memory is cached across calls.
#define BOOST_TEST_MODULE runtime
#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/input_conversion.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/runtime/scratch_memory.hpp>
#include <attnforge/testing/kernels_at.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

namespace runtime = attnforge::runtime;

namespace {

runtime::TensorMap sdpa_inputs(std::int64_t Lq, std::int64_t Lk) {
    return attnforge::testing::synthetic_inputs(attnforge::testing::kernels_at("sdpa", "output").front()->signature(),
                                                {1, 2, {{"q", Lq}, {"kv", Lk}}}, {});
}

std::string error_of(const runtime::TensorMap& inputs, std::string_view variant = "sdpa") {
    try {
        runtime::run(variant, inputs);
    } catch (const attnforge::input_error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_rule_picks_by_key_length) {
    BOOST_TEST(runtime::select_kernel("sdpa", sdpa_inputs(4, 8192)).strategy == "materialized");
    BOOST_TEST(runtime::select_kernel("sdpa", sdpa_inputs(4, 8193)).strategy == "streaming");
    BOOST_TEST(runtime::select_kernel("sdpa_causal", sdpa_inputs(4, 64)).strategy == "materialized");
    BOOST_TEST(runtime::select_kernel("sdpa_causal", sdpa_inputs(4, 8193)).strategy == "streaming");
    BOOST_TEST(runtime::select_kernel("sdpa", sdpa_inputs(4, 64), "attention_weights").result == "attention_weights");
}

// A cache's lengths are int32 and at most its size Lmax (docs/contract.md §1, §4).
BOOST_AUTO_TEST_CASE(cache_lengths_are_int32_within_the_cache) {
    runtime::TensorMap in = {{"q", runtime::Tensor::float32({2, 2, 1, 64})},
                             {"k", runtime::Tensor::float32({2, 2, 9, 64})},
                             {"v", runtime::Tensor::float32({2, 2, 9, 64})},
                             {"kv_length", runtime::Tensor::int32({2}, {9, 10})}};
    BOOST_TEST(error_of(in, "decode") ==
               "decode: input 'kv_length' holds 10 at index 1; a cache length must lie in [0, 9] (L[kv], the cache's "
               "size)");
    in["kv_length"] = runtime::Tensor::int32({2}, {-1, 3});
    BOOST_TEST(error_of(in, "decode").starts_with("decode: input 'kv_length' holds -1 at index 0"));
    in["kv_length"] = runtime::Tensor::float32({2}, {1, 3});
    BOOST_TEST(error_of(in, "decode") == "decode: input 'kv_length' must be int32, given float32");
    in["kv_length"] = runtime::Tensor::int32({2}, {0, 9});
    const runtime::Tensor out = runtime::run("decode", in);
    BOOST_TEST(out.f32[0] == 0.0f);  // an empty cache: a zero row
    // The rule: the decode strategy for a few queries (Lq <= 16), the streaming one beyond.
    BOOST_TEST(runtime::select_kernel("decode", in).strategy == "decode");
    for (const char* name : {"q"}) in[name] = runtime::Tensor::float32({2, 2, 17, 64});
    BOOST_TEST(runtime::select_kernel("decode", in).strategy == "streaming");
}

BOOST_AUTO_TEST_CASE(bad_inputs_are_named_with_both_shapes) {
    auto in = sdpa_inputs(4, 5);
    in["k"] = runtime::Tensor::float32({1, 2, 5, 32});
    BOOST_TEST(error_of(in) == "sdpa: input 'k' must have shape (B=1, Hkv, L[kv], E=64), given (1, 2, 5, 32)");

    in = sdpa_inputs(4, 5);
    in["v"] = runtime::Tensor::boolean({1, 2, 5, 64});
    BOOST_TEST(error_of(in) == "sdpa: input 'v' must be float32, given bool");

    in = sdpa_inputs(4, 5);
    in["q"].f32.pop_back();
    BOOST_TEST(error_of(in) == "sdpa: input 'q' holds 511 values but its shape (1, 2, 4, 64) needs 512");

    in = sdpa_inputs(4, 5);
    in.erase("q");
    BOOST_TEST(error_of(in).starts_with("sdpa: missing input 'q'"));

    BOOST_TEST(error_of(sdpa_inputs(4, 5), "nope").starts_with("unknown variant 'nope'; known: seed_attention, sdpa"));
}

BOOST_AUTO_TEST_CASE(thread_count_per_call_does_not_change_results) {
    const auto in = sdpa_inputs(129, 300);
    runtime::RunOptions one, two;
    one.threads = 1;
    two.threads = 2;
    for (const runtime::KernelEntry* k : attnforge::testing::kernels_at("sdpa", "output")) {
        BOOST_TEST_CONTEXT(k->name) {
            const auto a = runtime::run_kernel(*k, in, one), b = runtime::run_kernel(*k, in, two);
            BOOST_TEST(a.f32 == b.f32);  // bit-identical: no reduction is split across threads
        }
    }
}

BOOST_AUTO_TEST_CASE(empty_sizes_give_empty_outputs) {
    const auto out = runtime::run("sdpa", sdpa_inputs(0, 5));
    BOOST_TEST(out.shape == (std::vector<std::int64_t>{1, 2, 0, 64}), boost::test_tools::per_element());
    BOOST_TEST(out.f32.empty());
    const auto headless = runtime::run(
        "sdpa",
        attnforge::testing::synthetic_inputs(attnforge::testing::kernels_at("sdpa", "output").front()->signature(),
                                             {1, 0, {{"q", 4}, {"kv", 5}}}, {}));
    BOOST_TEST(headless.shape == (std::vector<std::int64_t>{1, 0, 4, 64}), boost::test_tools::per_element());
    auto batchless = attnforge::testing::synthetic_inputs(
        attnforge::testing::kernels_at("mha", "output").front()->signature(), {0, 0, {{"x", 7}}}, {});
    BOOST_TEST(runtime::run("mha", batchless).shape == (std::vector<std::int64_t>{0, 7, 512}),
               boost::test_tools::per_element());
}

// No keys at all (Lk = 0) while queries are present: every row is fully masked. No kernel can read an
// empty key sequence (its reads are clamped), so the runtime, which carries no interpreter, says so with
// no_keys_error — for every kernel, never a Halide bounds error or an abort — and the engine (the opt-in
// with the interpreter) gives the answer of fully masked rows: zeros from attention, and what follows
// it (an output projection, a residual) acting on those zeros.
BOOST_AUTO_TEST_CASE(an_empty_key_sequence_is_the_engines_to_answer) {
    for (const runtime::KernelEntry* k : attnforge::testing::kernels_at("sdpa", "output")) {
        try {
            runtime::run_kernel(*k, sdpa_inputs(4, 0));
            BOOST_FAIL(std::string(k->name) + " ran without keys");
        } catch (const runtime::no_keys_error& e) {
            BOOST_TEST(std::string(e.what()).find("sdpa: input 'k' of shape (1, 2, 0, 64) is empty") == 0);
        }
    }
    const auto out = runtime::evaluate("sdpa", sdpa_inputs(4, 0), runtime::Engine::kernel);
    BOOST_TEST(out.shape == (std::vector<std::int64_t>{1, 2, 4, 64}), boost::test_tools::per_element());
    BOOST_TEST(std::all_of(out.f32.begin(), out.f32.end(), [](float v) { return v == 0.0f; }));
    const auto in = attnforge::testing::synthetic_inputs(runtime::signature_of("cross_attention"),
                                                         {2, 0, {{"x", 3}, {"memory", 0}}}, {});
    BOOST_CHECK_THROW(runtime::run("cross_attention", in), runtime::no_keys_error);
    // The engine's answer, checked against what the contract says rather than against the interpreter
    // the engine itself ran: every attention row is zero, so the output projection of it is zero too.
    const auto cross = runtime::evaluate("cross_attention", in, runtime::Engine::kernel);
    BOOST_TEST(cross.shape == (std::vector<std::int64_t>{2, 3, 512}), boost::test_tools::per_element());
    BOOST_TEST(std::all_of(cross.f32.begin(), cross.f32.end(), [](float v) { return v == 0.0f; }));
    // With projections and a residual after it (decoder_layer, an empty memory): the engine's output
    // is the layer evaluated with the cross-attention's rows zero, which the same layer gives with a
    // memory whose every key is padded — a kernel's answer, not the interpreter's.
    const auto layer = attnforge::testing::synthetic_inputs(runtime::signature_of("decoder_layer"),
                                                            {2, 0, {{"x", 3}, {"memory", 0}}}, {});
    auto padded = attnforge::testing::synthetic_inputs(runtime::signature_of("decoder_layer"),
                                                       {2, 0, {{"x", 3}, {"memory", 4}}}, {});
    for (const auto& [name, t] : layer)
        if (name != "memory" && name != "memory_padding_mask") padded.insert_or_assign(name, t);
    std::fill(padded.at("memory_padding_mask").u8.begin(), padded.at("memory_padding_mask").u8.end(), 1);
    const auto empty_memory = runtime::evaluate("decoder_layer", layer, runtime::Engine::kernel);
    const auto all_padded = runtime::run("decoder_layer", padded);
    BOOST_TEST(empty_memory.shape == all_padded.shape, boost::test_tools::per_element());
    double worst = 0;
    for (std::size_t i = 0; i < all_padded.f32.size(); ++i)
        worst = std::max(worst, double(std::abs(empty_memory.f32[i] - all_padded.f32[i])));
    BOOST_TEST(worst <= 1e-4);
}

// Sizes are checked before anything is allocated or looped over: negative sizes, sizes beyond what a
// kernel can index (2^31 - 1) even when another size is 0, and products that overflow.
BOOST_AUTO_TEST_CASE(impossible_sizes_are_rejected_before_touching_memory) {
    auto in = sdpa_inputs(4, 5);
    in["q"] = runtime::Tensor::float32({std::int64_t{1} << 40, 2, 0, 64});
    in["k"] = runtime::Tensor::float32({std::int64_t{1} << 40, 2, 0, 64});
    in["v"] = runtime::Tensor::float32({std::int64_t{1} << 40, 2, 0, 64});
    BOOST_TEST(error_of(in) ==
               "sdpa: input 'q' has shape (1099511627776, 2, 0, 64); every size must be at most "
               "2^31 - 1 (the largest extent a kernel can index)");
    auto message = [](auto make) {
        try {
            make();
        } catch (const attnforge::input_error& e) {
            return std::string(e.what());
        }
        return std::string("<no error>");
    };
    BOOST_TEST(message([] { runtime::Tensor::float32({1, 2, -4, 64}); }) == "shape (1, 2, -4, 64) has a negative size");
    BOOST_TEST(message([] {
                   runtime::Tensor::float32({std::int64_t{1} << 40, std::int64_t{1} << 40});
               }) == "shape (1099511627776, 1099511627776) has more elements than fit in 64 bits");
}

BOOST_AUTO_TEST_CASE(run_kernel_into_reuses_the_callers_output_and_checks_it) {
    const auto in = sdpa_inputs(33, 70);
    const runtime::KernelEntry& k = runtime::select_kernel("sdpa", in);
    const runtime::Tensor fresh = runtime::run_kernel(k, in);
    runtime::Tensor out = runtime::Tensor::float32(fresh.shape);
    const float* storage = out.f32.data();
    for (int i = 0; i < 3; ++i) runtime::run_kernel_into(k, in, out, {});
    BOOST_TEST(out.f32.data() == storage);
    BOOST_TEST(out.f32 == fresh.f32);  // same kernel, same inputs: bit-identical

    runtime::Tensor wrong = runtime::Tensor::float32({1, 2, 33, 32});
    try {
        runtime::run_kernel_into(k, in, wrong, {});
        BOOST_FAIL("a wrongly shaped output was accepted");
    } catch (const attnforge::input_error& e) {
        BOOST_TEST(std::string(e.what()) ==
                   "output of " + std::string(k.name) +
                       ": expected float32 (1, 2, 33, 64), given float32 (1, 2, 33, 32)");
    }
}

// The kernels' large temporaries come back from the cache on the next call (runtime/scratch_memory.hpp):
// a call at L = 1024 allocates packed keys and per-task score tiles above the cache's threshold.
BOOST_AUTO_TEST_CASE(scratch_memory_is_reused_across_calls_and_bounded) {
    namespace scratch = runtime::scratch;
    const auto in = sdpa_inputs(64, 1024);
    runtime::RunOptions one;
    one.threads = 1;  // the calling thread does (almost) all the work, so its cache sees the blocks
    runtime::run("sdpa", in, one);
    const scratch::Stats first = scratch::this_thread_stats();
    BOOST_TEST(first.fresh > 0u);
    BOOST_TEST(first.cached_blocks > 0u);
    for (int i = 0; i < 3; ++i) runtime::run("sdpa", in, one);
    const scratch::Stats later = scratch::this_thread_stats();
    BOOST_TEST(later.fresh == first.fresh);  // nothing new allocated: every block reused
    // Every later call takes its blocks from the cache: at least the packed keys, allocated by the
    // calling thread before the parallel loop (the per-task tiles may land on a Halide worker that
    // wakes up anyway, with its own cache, so their count on this thread is not fixed).
    BOOST_TEST(later.reuses >= first.reuses + 3);
    BOOST_TEST(later.cached_bytes <= scratch::kMaxCachedBytes);
    scratch::trim_this_thread();
    BOOST_TEST(scratch::this_thread_stats().cached_blocks == 0u);

    // The allocator's contract with Halide: aligned, usable to the rounded-up size, reusable.
    void* a = scratch::allocate(nullptr, 100000);
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(a) % scratch::kAlignment == 0u);
    static_cast<char*>(a)[99999] = 1;
    scratch::release(nullptr, a);
    void* b = scratch::allocate(nullptr, 99000);  // fits the cached block, at least half its size
    BOOST_TEST(b == a);
    scratch::release(nullptr, b);
    void* small = scratch::allocate(nullptr, 16);  // too small for the cached block: a block of its own, cached too
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(small) % scratch::kAlignment == 0u);
    BOOST_TEST(small != a);
    scratch::release(nullptr, small);
    BOOST_TEST(scratch::this_thread_stats().cached_blocks == 2u);
    void* again = scratch::allocate(nullptr, 40);  // 40 and 16 both round up to one 64-byte block
    BOOST_TEST(again == small);
    scratch::release(nullptr, again);
    scratch::trim_this_thread();

    // Past the count limit the smallest block goes, not the oldest: many small blocks freed after a large one
    // leave it cached (a large block allocated again would page-fault again).
    void* large = scratch::allocate(nullptr, 1 << 20);
    scratch::release(nullptr, large);
    std::vector<void*> smalls;
    for (std::size_t i = 0; i < scratch::kMaxCachedBlocks + 4; ++i) smalls.push_back(scratch::allocate(nullptr, 64));
    for (void* p : smalls) scratch::release(nullptr, p);
    BOOST_TEST(scratch::this_thread_stats().cached_blocks == scratch::kMaxCachedBlocks);
    const std::size_t fresh = scratch::this_thread_stats().fresh;
    void* large_again = scratch::allocate(nullptr, 1 << 20);
    BOOST_TEST(scratch::this_thread_stats().fresh == fresh);  // served from the cache, not allocated anew
    BOOST_TEST(large_again == large);
    scratch::release(nullptr, large_again);
    scratch::trim_this_thread();
}

// Storage types (runtime/storage_types.hpp): float32 → bf16 rounds to nearest even (ties to the even
// one, a carry into the exponent, overflow to ∞), NaN stays NaN; fp16 likewise; to_storage leaves
// masks and index inputs alone and refuses a 16-bit tensor of the other type.
BOOST_AUTO_TEST_CASE(storage_types_round_to_nearest_even) {
    auto bits = [](std::uint32_t b) { return std::bit_cast<float>(b); };
    BOOST_TEST(runtime::bf16_from_float(1.0f) == 0x3f80);
    BOOST_TEST(runtime::bf16_from_float(bits(0x3f808000)) == 0x3f80);  // a tie: to the even 0x3f80
    BOOST_TEST(runtime::bf16_from_float(bits(0x3f818000)) == 0x3f82);  // a tie: to the even 0x3f82
    BOOST_TEST(runtime::bf16_from_float(bits(0x3f808001)) == 0x3f81);  // past the tie: up
    BOOST_TEST(runtime::bf16_from_float(bits(0x3fffffff)) == 0x4000);  // carries into the exponent
    BOOST_TEST(runtime::bf16_from_float(bits(0x7f7fffff)) == 0x7f80);  // the largest float: ∞
    BOOST_TEST(std::isnan(runtime::float_from_bf16(runtime::bf16_from_float(bits(0x7fffffff)))));
    BOOST_TEST(std::isnan(runtime::float_from_bf16(runtime::bf16_from_float(bits(0xffffffff)))));
    BOOST_TEST(runtime::float_from_bf16(runtime::bf16_from_float(-INFINITY)) == -INFINITY);
    BOOST_TEST(runtime::float_from_fp16(runtime::fp16_from_float(0.1f)) == 0.0999755859375f);
    BOOST_TEST(runtime::float_from_fp16(runtime::fp16_from_float(65520.0f)) == INFINITY);  // past 65504: ∞

    runtime::TensorMap inputs = sdpa_inputs(3, 5);
    const auto stored =
        runtime::to_storage(inputs, attnforge::dsl::element_type::bfloat16, runtime::signature_of("sdpa"));
    BOOST_TEST((stored.at("q").dtype == attnforge::dsl::element_type::bfloat16));
    BOOST_TEST(stored.at("q").item_bytes() == 2u);
    BOOST_TEST(runtime::to_float32(stored.at("q")).f32[4] ==
               runtime::round_to_storage(inputs.at("q").f32[4], attnforge::dsl::element_type::bfloat16));
    BOOST_CHECK_THROW(runtime::to_storage(stored, attnforge::dsl::element_type::float16, runtime::signature_of("sdpa")),
                      attnforge::input_error);
    const auto lengths = runtime::Tensor::int32({2}, {1, 2});
    BOOST_TEST((runtime::to_storage(lengths, attnforge::dsl::element_type::bfloat16).dtype ==
                attnforge::dsl::element_type::int32));
}

// docs/contract.md §4's rules, which the CLI, the Python module and to_storage all convert by: what each
// input type takes, the values it gives, and refusals that name what was given.
BOOST_AUTO_TEST_CASE(input_conversion_follows_the_contracts_rules) {
    using attnforge::dsl::element_type;
    using G = runtime::GivenType;
    BOOST_TEST(runtime::takes(element_type::boolean, G::uint8));
    BOOST_TEST(!runtime::takes(element_type::uint8, G::boolean));  // codes: their own type only
    BOOST_TEST(!runtime::takes(element_type::int8, G::uint8));
    BOOST_TEST(runtime::takes(element_type::int32, G::float64));
    BOOST_TEST(runtime::takes(element_type::float32, G::bfloat16));
    BOOST_TEST(!runtime::takes(element_type::bfloat16, G::float16));  // never re-rounded into the other
    BOOST_TEST(!runtime::takes(element_type::float32, G::int32));
    auto name = [](G t) { return t == G::float16 ? std::string() : std::to_string(static_cast<int>(t)); };
    BOOST_TEST(runtime::taken_text(element_type::float32, name) == "0 (or 1, 3)");  // float16 skipped
    BOOST_TEST(runtime::taken_text(element_type::uint8, name) == "5");

    const float values[] = {1.0f, std::bit_cast<float>(0x3f808000u), -2.5f};
    std::uint16_t bf16[3];
    runtime::convert_elements(reinterpret_cast<const std::uint8_t*>(values), G::float32, 3, element_type::bfloat16,
                              reinterpret_cast<std::uint8_t*>(bf16), "x");
    BOOST_TEST(bf16[0] == 0x3f80);
    BOOST_TEST(bf16[1] == 0x3f80);  // a tie, to even
    float back[3];
    runtime::convert_elements(reinterpret_cast<const std::uint8_t*>(bf16), G::bfloat16, 3, element_type::float32,
                              reinterpret_cast<std::uint8_t*>(back), "x");
    BOOST_TEST(back[2] == -2.5f);  // exact

    const double ids[] = {3.0, 7.0, 2.5};
    std::int32_t out[3] = {};
    try {
        runtime::convert_elements(reinterpret_cast<const std::uint8_t*>(ids), G::float64, 3, element_type::int32,
                                  reinterpret_cast<std::uint8_t*>(out), "input 'doc'");
        BOOST_ERROR("2.5 was taken as an index");
    } catch (const attnforge::input_error& e) {
        BOOST_TEST(std::string(e.what()).find("input 'doc'") != std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find("2.5") != std::string::npos, e.what());
    }
    BOOST_TEST(out[1] == 7);
    const std::uint8_t mask[] = {0, 2, 1};
    std::uint8_t kept[3];
    runtime::convert_elements(mask, G::uint8, 3, element_type::boolean, kept, "m");
    BOOST_TEST((kept[0] == 0 && kept[1] == 1 && kept[2] == 1));

    // to_storage by the same rules: a bf16 tensor is taken by a float32 kernel, exactly.
    const auto stored = runtime::to_storage(sdpa_inputs(3, 5), element_type::bfloat16, runtime::signature_of("sdpa"));
    const runtime::Tensor widened = runtime::to_storage(stored.at("q"), element_type::float32);
    BOOST_TEST((widened.dtype == element_type::float32));
    BOOST_TEST(widened.f32[4] == runtime::to_float32(stored.at("q")).f32[4]);
}

// A bf16 kernel takes bf16 inputs and gives a bf16 output; float32 inputs are an input error naming the
// storage type, and so is an unknown one.
BOOST_AUTO_TEST_CASE(kernels_of_a_storage_type_take_and_give_it) {
    const auto inputs =
        runtime::to_storage(sdpa_inputs(3, 5), attnforge::dsl::element_type::bfloat16, runtime::signature_of("sdpa"));
    runtime::RunOptions bf16;
    bf16.dtype = "bf16";
    const runtime::Tensor out = runtime::run("sdpa", inputs, bf16);
    BOOST_TEST((out.dtype == attnforge::dsl::element_type::bfloat16));
    BOOST_TEST(out.u16.size() == 1u * 2 * 3 * 64);
    BOOST_TEST(runtime::select_kernel("sdpa", inputs, "output", "bf16").storage == "bf16");
    try {
        runtime::run("sdpa", sdpa_inputs(3, 5), bf16);
        BOOST_ERROR("float32 inputs to a bf16 kernel were taken");
    } catch (const attnforge::input_error& e) {
        BOOST_TEST(std::string(e.what()).find("input 'q' must be bf16") != std::string::npos, e.what());
    }
    runtime::RunOptions other;
    other.dtype = "int8";
    BOOST_CHECK_THROW(runtime::run("sdpa", inputs, other), attnforge::input_error);
}
