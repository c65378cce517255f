// The knob table is the one place a knob is defined: these tests fail when the generator's parameters,
// the plan made from the knobs, or the table itself disagree with it. (The tuner's search space is
// checked against it in tests/tune/test_unit.cpp, the docs in tests/codegen/check_knob_docs.cmake.)
#define BOOST_TEST_MODULE knob_table
#include <attnforge/codegen/schedules/knobs.hpp>
#include <attnforge/codegen/schedules/schedule.hpp>

#include <Halide.h>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <string>

namespace cg = attnforge::codegen;

BOOST_AUTO_TEST_CASE(every_row_is_consistent) {
    std::set<std::string_view> names;
    for (const cg::KnobSpec& k : cg::knob_table) {
        BOOST_TEST_CONTEXT(k.name) {
            BOOST_TEST(names.insert(k.name).second, "named twice");
            BOOST_TEST(k.min <= k.default_value);
            BOOST_TEST(k.default_value <= k.max);
            BOOST_TEST((k.avx2_default == 0 || (k.min <= k.avx2_default && k.avx2_default <= k.max)));
            BOOST_TEST(k.strategies != 0u);
            BOOST_TEST(!k.meaning.empty());
            BOOST_TEST(std::is_sorted(k.tuned_values.begin(), k.tuned_values.end()));
            for (int v : k.tuned_values)
                BOOST_TEST((k.min <= v && v <= k.max), v << " outside [" << k.min << ", " << k.max << "]");
        }
    }
    // Members are distinct: a copy-pasted row would set one knob twice and another never.
    for (std::size_t i = 0; i < cg::knob_table.size(); ++i)
        for (std::size_t j = i + 1; j < cg::knob_table.size(); ++j)
            BOOST_TEST((cg::knob_table[i].member != cg::knob_table[j].member),
                       cg::knob_table[i].name << " and " << cg::knob_table[j].name);
    BOOST_TEST(cg::admissible(cg::default_knobs()));
    BOOST_TEST(cg::admissible(cg::default_knobs(cg::Strategy::materialized, 8)));
}

// The default register tiles fit the target's register file: 32 vectors on AVX-512, 16 on AVX2 (a tile
// that does not spills every iteration). Score tile: q_unroll x k_unroll accumulators, k_unroll key
// vectors and a broadcast query; P.V tile (E = 64): pv_unroll x pv_cols (0: E/lanes) accumulators, one P broadcast
// and one V vector at a time; projection: proj_rows x proj_cols accumulators, proj_cols weight vectors
// and a broadcast.
BOOST_AUTO_TEST_CASE(default_register_tiles_fit_the_target) {
    for (const auto& [lanes, registers] : {std::pair{16, 32}, std::pair{8, 16}}) {
        BOOST_TEST_CONTEXT(lanes << " lanes") {
            const cg::Knobs k = cg::default_knobs(cg::Strategy::materialized, lanes);
            BOOST_TEST(k.q_unroll * k.k_unroll + k.k_unroll + 1 <= registers);
            const int value_columns = k.pv_cols > 0 ? std::min(k.pv_cols, 64 / lanes) : 64 / lanes;
            BOOST_TEST(k.pv_unroll * value_columns + 2 <= registers);
            BOOST_TEST(k.proj_rows * k.proj_cols + k.proj_cols + 1 <= registers);
        }
    }
}

BOOST_AUTO_TEST_CASE(set_knob_checks_name_and_range) {
    cg::Knobs k = cg::default_knobs();
    cg::set_knob(k, "q_block", 64);
    BOOST_TEST(k.q_block == 64);
    BOOST_CHECK_THROW(cg::set_knob(k, "q_block", 100000), std::invalid_argument);
    BOOST_CHECK_THROW(cg::set_knob(k, "no_such_knob", 1), std::invalid_argument);
}

// The generator declares one GeneratorParam per row and refuses values outside the row's range when it
// builds the pipeline (Halide itself checks only the default).
BOOST_AUTO_TEST_CASE(generator_params_follow_the_table) {
    const Halide::GeneratorContext context(Halide::get_host_target());
    auto generator_with = [&](const cg::KnobSpec& k, int value) {
        auto g = Halide::Internal::GeneratorRegistry::create("attnforge_attention", context);
        BOOST_REQUIRE(g);
        g->set_generatorparam_value("variant", "sdpa");
        g->set_generatorparam_value("head_width", "64");  // sdpa's E is run-time: a kernel is of one width
        g->set_generatorparam_value("strategy", "streaming");
        g->set_generatorparam_value(std::string(k.name), std::to_string(value));
        return g;
    };
    for (const cg::KnobSpec& k : cg::knob_table) {
        BOOST_TEST_CONTEXT(k.name) {
            BOOST_CHECK_THROW(generator_with(k, k.max + 1)->build_pipeline(), std::invalid_argument);
            BOOST_CHECK_THROW(generator_with(k, k.min - 1)->build_pipeline(), std::invalid_argument);
        }
    }
    // In range (the defaults): the pipeline builds.
    auto g = Halide::Internal::GeneratorRegistry::create("attnforge_attention", context);
    g->set_generatorparam_value("variant", "sdpa");
    g->set_generatorparam_value("head_width", "64");
    BOOST_CHECK_NO_THROW(g->build_pipeline());
}

// A variant whose E is run-time is generated for one head width, given; a variant that fixes E takes none.
BOOST_AUTO_TEST_CASE(head_width_is_given_exactly_where_the_graph_leaves_it_open) {
    const Halide::GeneratorContext context(Halide::get_host_target());
    auto generator = [&](const char* variant, const char* width) {
        auto g = Halide::Internal::GeneratorRegistry::create("attnforge_attention", context);
        g->set_generatorparam_value("variant", variant);
        if (*width) g->set_generatorparam_value("head_width", width);
        return g;
    };
    BOOST_CHECK_THROW(generator("sdpa", "")->build_pipeline(), std::invalid_argument);
    BOOST_CHECK_THROW(generator("mha", "64")->build_pipeline(), std::invalid_argument);
    BOOST_CHECK_NO_THROW(generator("sdpa", "96")->build_pipeline());
}

// The decode strategy builds output kernels whose head width is whole vectors, and refuses the rest
// with a message instead of failing inside the schedule.
BOOST_AUTO_TEST_CASE(decode_strategy_refuses_what_it_cannot_build) {
    const Halide::GeneratorContext context(Halide::get_host_target());
    auto generator = [&](const char* variant, const char* result) {
        auto g = Halide::Internal::GeneratorRegistry::create("attnforge_attention", context);
        g->set_generatorparam_value("variant", variant);
        g->set_generatorparam_value("result", result);
        g->set_generatorparam_value("strategy", "decode");
        if (std::string(variant) == "decode") g->set_generatorparam_value("head_width", "64");
        return g;
    };
    BOOST_CHECK_NO_THROW(generator("decode", "output")->build_pipeline());
    BOOST_CHECK_THROW(generator("seed_attention", "output")->build_pipeline(), std::invalid_argument);  // E = 3
    BOOST_CHECK_THROW(generator("decode", "attention_weights")->build_pipeline(), std::invalid_argument);
}

// The algorithm knobs make the plan; the schedule knobs never change it.
BOOST_AUTO_TEST_CASE(plan_reads_the_algorithm_knobs_only) {
    const Halide::Target avx512("x86-64-linux-avx512_skylake");
    for (cg::Strategy s : {cg::Strategy::materialized, cg::Strategy::streaming}) {
        const cg::Knobs base = cg::default_knobs(s);
        const cg::Tiles t = cg::tiles(cg::plan_for(base, avx512));
        BOOST_TEST(t.lanes == 16);
        BOOST_TEST(t.query_tile == base.q_block);
        BOOST_TEST(t.key_panel == base.k_unroll * 16);
        BOOST_TEST(t.projection_columns == base.proj_cols * 16);
        for (const cg::KnobSpec& k : cg::knob_table) {
            if (k.level != cg::KnobLevel::schedule) continue;
            cg::Knobs changed = base;
            changed.*k.member = k.max;
            const cg::Tiles u = cg::tiles(cg::plan_for(changed, avx512));
            BOOST_TEST((u.lanes == t.lanes && u.query_tile == t.query_tile && u.key_panel == t.key_panel &&
                        u.projection_columns == t.projection_columns),
                       k.name << " is a schedule knob but changed the plan");
        }
    }
    cg::Knobs streaming = cg::default_knobs(cg::Strategy::streaming);
    streaming.k_block = 256;
    BOOST_TEST(std::get<cg::StreamingPlan>(cg::plan_for(streaming, avx512)).key_tile == 256);
    BOOST_TEST(std::get<cg::MaterializedPlan>(cg::plan_for(cg::default_knobs(), avx512)).skip_band_panels);
    BOOST_TEST(!std::get<cg::MaterializedPlan>(cg::plan_for(cg::default_knobs(cg::Strategy::unscheduled), avx512))
                    .skip_band_panels);
}

// The strategy table's plan column is the plan each strategy lowers with: plan_for gives that alternative.
BOOST_AUTO_TEST_CASE(strategy_table_names_the_plan_each_strategy_lowers_with) {
    const Halide::Target avx512("x86-64-linux-avx512_skylake");
    const char* names[] = {"MaterializedPlan", "StreamingPlan", "DecodePlan"};  // AlgorithmPlan's order
    static_assert(std::variant_size_v<cg::AlgorithmPlan> == 3);
    for (const auto& spec : attnforge::catalogue::strategy_table) {
        const cg::AlgorithmPlan plan = cg::plan_for(cg::default_knobs(spec.strategy), avx512);
        BOOST_TEST(spec.plan == names[plan.index()], spec.name << " lowers with " << names[plan.index()]);
    }
}

// Decode tiles: with 8-lane vectors (AVX2) a GQA group's P·V re-reads the key tile's V once per tile of columns,
// so the list's large tiles (multiples of 512, for AVX-512) become 512 there; other sizes stay as given.
BOOST_AUTO_TEST_CASE(decode_tiles_on_eight_lanes_stay_at_512) {
    const Halide::Target avx512("x86-64-linux-avx512_skylake"), avx2("x86-64-linux-avx2-fma-f16c-sse41");
    auto tile = [](int k_block, int split_keys, const Halide::Target& target, int vector_width = 0) {
        cg::Knobs k = cg::default_knobs(cg::Strategy::decode);
        k.k_block = k_block;
        k.split_keys = split_keys;
        k.vector_width = vector_width;
        const auto plan = std::get<cg::DecodePlan>(cg::plan_for(k, target));
        BOOST_TEST(plan.split_keys % plan.key_tile == 0);  // whole tiles per split
        return plan.key_tile;
    };
    BOOST_TEST(tile(2048, 8192, avx512) == 2048);
    BOOST_TEST(tile(2048, 8192, avx2) == 512);
    BOOST_TEST(tile(1024, 2048, avx2) == 512);
    BOOST_TEST(tile(2048, 2048, avx512, 8) == 512);  // vector_width=8: the same loop structure as AVX2
    BOOST_TEST(tile(512, 2048, avx2) == 512);
    BOOST_TEST(tile(64, 2048, avx2) == 64);
    BOOST_TEST(tile(600, 1200, avx2) == 600);  // not a multiple of 512: as given
}
