// attnforge tune, piece by piece: the search space, size buckets, records (round trip, corrupt lines,
// key matching), the kernel list's rule, validation rejecting a wrong candidate, and the search keeping
// the previous record in its final comparison.
#define BOOST_TEST_MODULE tune_unit
#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/codegen/schedules/knobs.hpp>
#include <attnforge/errors.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <candidate.hpp>
#include <filesystem>
#include <fstream>
#include <machine.hpp>
#include <problem.hpp>
#include <search.hpp>
#include <search_space.hpp>
#include <validate.hpp>
#include <workload.hpp>

namespace tune = attnforge::tune;

BOOST_AUTO_TEST_CASE(search_space_points_are_admissible_in_range_and_deterministic) {
    const tune::SearchSpace space({"materialized", "streaming"}, 16);
    for (const std::string s : {"materialized", "streaming"}) BOOST_TEST(space.admissible(space.default_point(s)));
    std::mt19937_64 a(42), b(42), c(7);
    for (int i = 0; i < 200; ++i) {
        const tune::SchedulePoint p = space.random_point(a), q = space.random_point(b);
        BOOST_TEST(p.key() == q.key());  // same seed, same points
        BOOST_TEST(space.admissible(p));
        const tune::SchedulePoint m = i % 2 ? space.mutate(p, c) : space.crossover(p, q, c);
        BOOST_TEST(space.admissible(m));
        for (const auto& [name, value] : m.knobs) {
            bool in_range = false;
            for (const auto& r : space.knobs(m.strategy))
                if (r.name == name) in_range = std::find(r.values.begin(), r.values.end(), value) != r.values.end();
            BOOST_TEST(in_range, name << "=" << value << " is outside its range");
        }
    }
    // Knobs a graph does not read are not searched.
    const tune::SearchSpace no_projections({"materialized"}, 16, false);
    BOOST_TEST(no_projections.default_point("materialized").knobs.count("proj_rows") == 0u);
    BOOST_TEST(space.default_point("materialized").knobs.count("proj_rows") == 1u);
    BOOST_TEST(space.default_point("streaming").knobs.count("k_block") == 1u);
    BOOST_TEST(space.default_point("materialized").knobs.count("k_block") == 0u);
    BOOST_CHECK_THROW(tune::SearchSpace({"tiled"}, 16), std::invalid_argument);
}

// A record or journal from a build with fewer knobs: the point it names lacks the newer knobs. Completed,
// it carries their defaults (what that build ran), equals the default point where its knobs do, and
// recombines with searched points (a crossover reading a knob it lacked threw std::out_of_range).
BOOST_AUTO_TEST_CASE(points_from_older_builds_are_completed_with_defaults) {
    const tune::SearchSpace space({"materialized"}, 16, false);
    tune::SchedulePoint old = space.default_point("materialized");
    old.knobs.erase("keys_per_task");
    old.knobs["q_block"] = 128;
    const tune::SchedulePoint completed = space.complete(old);
    BOOST_TEST(completed.knobs.at("keys_per_task") == space.default_point("materialized").knobs.at("keys_per_task"));
    BOOST_TEST(completed.knobs.at("q_block") == 128);
    BOOST_TEST(space.complete(space.default_point("materialized")).key() == space.default_point("materialized").key());
    std::mt19937_64 rng(3);
    for (int i = 0; i < 50; ++i) {
        const tune::SchedulePoint child = space.crossover(space.random_point(rng), completed, rng);
        BOOST_TEST(child.knobs.size() == space.knobs("materialized").size());
    }
}

BOOST_AUTO_TEST_CASE(problems_check_their_sizes) {
    const tune::Problem p = tune::make_problem("mha", "output", {2, 8, 300, 300});
    BOOST_TEST(p.self_attention);
    BOOST_TEST(p.projections);
    BOOST_TEST(attnforge::catalogue::size_bucket(p.key_length) == "256<Lk<=512");
    const tune::Problem v = tune::validation_problem(p);
    BOOST_TEST(v.asked.lk == 257);  // the bucket's smallest key length
    BOOST_TEST(v.asked.lq == 257);
    BOOST_CHECK_THROW(tune::make_problem("mha", "output", {1, 8, 300, 200}), attnforge::input_error);
    BOOST_CHECK_THROW(tune::make_problem("no_such_variant", "output", {}), attnforge::input_error);
    BOOST_CHECK_THROW(tune::make_problem("sdpa", "logits", {}), attnforge::input_error);
    BOOST_TEST(!tune::make_problem("sdpa", "output", {1, 8, 40, 300}).self_attention);
}

// A candidate that computes something else (sdpa_causal's kernel has sdpa's inputs exactly) must be
// rejected before it is timed; the right one accepted.
BOOST_AUTO_TEST_CASE(validation_rejects_a_wrong_candidate) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    const tune::Problem sdpa = tune::make_problem("sdpa", "output", {1, 2, 80, 80});
    tune::Validator validator(sdpa);
    tune::Workload w(sdpa);
    const tune::SearchSpace space({"materialized"}, target.has_feature(Halide::Target::AVX512) ? 16 : 8, false);
    const auto right = tune::Candidate::compile(sdpa, space.default_point("materialized"), target, 1);
    BOOST_TEST(validator.check(right, w) == "ok");
    const tune::Problem causal = tune::make_problem("sdpa_causal", "output", {1, 2, 80, 80});
    const auto wrong = tune::Candidate::compile(causal, space.default_point("materialized"), target, 1);
    const std::string verdict = validator.check(wrong, w);
    BOOST_TEST(verdict.rfind("invalid: differs from the interpreter", 0) == 0u, verdict);
    // A different schedule of the right graph is fine.
    tune::SchedulePoint other = space.default_point("materialized");
    other.knobs["q_block"] = 8;
    other.knobs["q_unroll"] = 4;
    other.knobs["pv_unroll"] = 2;
    BOOST_TEST(validator.check(tune::Candidate::compile(sdpa, other, target, 1), w) == "ok");
}

// attnforge tune --dtype bf16: candidates are bf16 kernels (bf16 inputs and output), validated against the
// interpreter on the rounded inputs with the bf16 bound; a float32 kernel given bf16 buffers is refused.
BOOST_AUTO_TEST_CASE(bf16_candidates_are_validated_as_bf16_kernels) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    const tune::Problem sdpa = tune::make_problem("sdpa", "output", {1, 2, 80, 80}, "bf16");
    BOOST_TEST(tune::machine_key(sdpa, 1).storage == "bf16");
    tune::Validator validator(sdpa);
    tune::Workload w(sdpa);
    BOOST_TEST((w.output.dtype == attnforge::dsl::element_type::bfloat16));
    const tune::SearchSpace space({"materialized", "streaming"}, target.has_feature(Halide::Target::AVX512) ? 16 : 8,
                                  false);
    for (const char* strategy : {"materialized", "streaming"})
        BOOST_TEST(validator.check(tune::Candidate::compile(sdpa, space.default_point(strategy), target, 1), w) ==
                   "ok");
    const tune::Problem float32 = tune::make_problem("sdpa", "output", {1, 2, 80, 80});
    const std::string verdict =
        validator.check(tune::Candidate::compile(float32, space.default_point("materialized"), target, 1), w);
    BOOST_TEST(verdict.rfind("invalid", 0) == 0u, verdict);
    BOOST_CHECK_THROW(tune::make_problem("sdpa", "output", {1, 2, 80, 80}, "int8"), attnforge::input_error);
}

// Found by attnforge tune: projection tiles of 3 vectors (48 columns) do not divide D = 512 and read
// the weights past their width; the lowering now clamps those columns.
BOOST_AUTO_TEST_CASE(projection_tiles_that_do_not_divide_the_width_are_valid) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    const tune::Problem mha = tune::make_problem("mha", "output", {1, 8, 70, 70});
    tune::Validator validator(mha);
    tune::Workload w(mha);
    const tune::SearchSpace space({"materialized"}, target.has_feature(Halide::Target::AVX512) ? 16 : 8);
    BOOST_TEST(validator.check(tune::Candidate::compile(mha, space.default_point("materialized"), target, 1), w) ==
               "ok");
    tune::SchedulePoint odd = space.default_point("materialized");
    odd.knobs["proj_cols"] = 3;
    BOOST_TEST(validator.check(tune::Candidate::compile(mha, odd, target, 1), w) == "ok");
}

// Both loop orders of a projection (proj_panels: column panels or row tiles outermost), with Q, K and V
// in one loop nest or one each (proj_fused), compute the same thing, with row counts that leave a
// partial row tile (70 = 11·6 + 4; 5 < one tile), where the accumulator tile is computed whole
// (bound_extent) and only the output's stores are guarded.
BOOST_AUTO_TEST_CASE(both_projection_loop_orders_are_valid_with_partial_row_tiles) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    const tune::SearchSpace space({"materialized"}, target.has_feature(Halide::Target::AVX512) ? 16 : 8);
    for (int length : {70, 5}) {
        const tune::Problem mha = tune::make_problem("mha", "output", {2, 8, length, length});
        tune::Validator validator(mha);
        tune::Workload w(mha);
        for (int panels : {0, 1})
            for (int fused : {0, 1}) {
                tune::SchedulePoint p = space.default_point("materialized");
                BOOST_TEST(p.knobs.count("proj_panels") == 1u);
                BOOST_TEST(p.knobs.count("proj_fused") == 1u);
                p.knobs["proj_panels"] = panels;
                p.knobs["proj_fused"] = fused;
                BOOST_TEST_CONTEXT("L = " << length << ", proj_panels = " << panels << ", proj_fused = " << fused) {
                    BOOST_TEST(validator.check(tune::Candidate::compile(mha, p, target, 1), w) == "ok");
                }
            }
    }
}

// Projections in one loop nest (proj_fused 1) only where input and width match: GQA's and MQA's K and V
// are narrower than Q (their own nest; fused with Q, the shared parallel loop read x past its batch
// extent), cross-attention's K and V read another input, the decoder layer's read a LayerNorm.
BOOST_AUTO_TEST_CASE(fused_projections_are_valid_for_every_graph_shape) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    for (const std::string variant : {"gqa", "mqa", "cross_attention", "decoder_layer"}) {
        const tune::Problem problem = tune::make_problem(variant, "output", {2, 8, 37, 37});
        tune::Validator validator(problem);
        tune::Workload w(problem);
        const tune::SearchSpace space({"materialized"}, target.has_feature(Halide::Target::AVX512) ? 16 : 8);
        tune::SchedulePoint p = space.default_point("materialized");
        p.knobs["proj_fused"] = 1;
        BOOST_TEST_CONTEXT(variant) {
            BOOST_TEST(validator.check(tune::Candidate::compile(problem, p, target, 1), w) == "ok");
        }
    }
}

// A 0/1 knob set to 1 on the default point of both strategies, for sdpa and sdpa_causal (a causal band) in each
// storage type given, with several query blocks per head and a partial one (70 = 2·32 + 6): the same results.
static void check_knob_set_to_one(const std::string& knob, std::initializer_list<const char*> dtypes) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    for (const std::string dtype : dtypes) {
        for (const std::string variant : {"sdpa", "sdpa_causal"}) {
            const tune::Problem problem = tune::make_problem(variant, "output", {2, 2, 70, 70}, dtype);
            tune::Validator validator(problem);
            tune::Workload w(problem);
            for (const std::string strategy : {"materialized", "streaming"}) {
                const tune::SearchSpace space({strategy}, target.has_feature(Halide::Target::AVX512) ? 16 : 8, false);
                tune::SchedulePoint p = space.default_point(strategy);
                BOOST_TEST(p.knobs.count(knob) == 1u);
                p.knobs[knob] = 1;
                BOOST_TEST_CONTEXT(knob << ": " << variant << ", " << strategy << ", " << dtype) {
                    BOOST_TEST(validator.check(tune::Candidate::compile(problem, p, target, 1), w) == "ok");
                }
            }
        }
    }
}

// K packed inside each attention task (keys_per_task 1) computes the same thing as once per call, also under a
// causal band, where a task packs only the keys its block reads.
BOOST_AUTO_TEST_CASE(keys_packed_per_task_are_valid) { check_knob_set_to_one("keys_per_task", {"float32"}); }

// S = Q·Kᵀ with each panel of K through every row tile of the block (key_panels_outer 1; several row tiles of
// q_unroll 8 and a partial one per block) computes the same thing as row tiles outermost, float32 and bf16 pairs.
BOOST_AUTO_TEST_CASE(key_panels_outermost_are_valid) { check_knob_set_to_one("key_panels_outer", {"float32", "bf16"}); }

// P·V tiles over part of E (pv_cols: 1, 2 or 4 vectors, with several rows per tile; 3 does not divide
// E = 64 and means all of E) compute the same thing, for both strategies, in float32 and in bf16 (where
// the reduction is over pairs of keys), with a partial query tile (70 = 2·32 + 6).
BOOST_AUTO_TEST_CASE(value_tiles_over_part_of_the_head_width_are_valid) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    const int lanes = target.has_feature(Halide::Target::AVX512) ? 16 : 8;
    for (const std::string dtype : {"float32", "bf16"}) {
        const tune::Problem problem = tune::make_problem("sdpa_causal", "output", {1, 2, 70, 70}, dtype);
        tune::Validator validator(problem);
        tune::Workload w(problem);
        for (const std::string strategy : {"materialized", "streaming"}) {
            const tune::SearchSpace space({strategy}, lanes, false);
            for (int columns : {1, 2, 3, 4}) {
                tune::SchedulePoint p = space.default_point(strategy);
                BOOST_TEST(p.knobs.count("pv_cols") == 1u);
                p.knobs["pv_cols"] = columns;
                p.knobs["pv_unroll"] = 2;
                p.knobs["q_unroll"] = 4;
                p.knobs["q_block"] = 32;
                BOOST_TEST_CONTEXT(dtype << ", " << strategy << ", pv_cols = " << columns) {
                    BOOST_TEST(validator.check(tune::Candidate::compile(problem, p, target, 1), w) == "ok");
                }
            }
        }
    }
}

// The previous record's best always reaches the final comparison (it decides whether the build's kernel
// is replaced), also when the record is from a build with fewer knobs: its point lacks the newer ones
// and was matched against its completed trial by equality, so it silently dropped out (found on an
// mha record from before proj_fused).
BOOST_AUTO_TEST_CASE(an_older_records_best_reaches_the_final_comparison) {
    const Halide::Target target = Halide::get_jit_target_from_environment();
    const tune::Problem sdpa = tune::make_problem("sdpa", "output", {1, 2, 80, 80});
    const tune::SearchSpace space({"materialized"}, target.has_feature(Halide::Target::AVX512) ? 16 : 8, false);
    tune::SchedulePoint old = space.default_point("materialized");
    old.knobs["q_block"] = 4;  // slow: not among the fastest, so only its own place brings it to the final
    old.knobs["q_unroll"] = 1;
    old.knobs["k_unroll"] = 1;
    old.knobs.erase("keys_per_task");
    tune::SearchOptions o;
    o.strategies = {"materialized"};
    o.autoschedulers = {};
    o.max_trials = 4;
    o.finalists = 0;  // the final comparison: the default and the previous record, then the fastest other
    o.previous_best = old;
    const std::atomic<int> interrupts{0};
    const tune::SearchOutcome out = tune::run_search(sdpa, target, o, interrupts, [](const tune::Progress&) {});
    BOOST_REQUIRE(out.previous_index >= 0);
    const tune::Trial& previous = out.trials.at(static_cast<std::size_t>(out.previous_index));
    BOOST_TEST(previous.ok(), previous.status);
    BOOST_TEST(previous.point.knobs.at("q_block") == 4);
    BOOST_TEST(previous.point.knobs.count("keys_per_task") == 1u);
    BOOST_TEST(std::count(out.finalists.begin(), out.finalists.end(), out.previous_index) == 1);
    BOOST_TEST(std::count(out.finalists.begin(), out.finalists.end(), out.default_index) == 1);
    BOOST_TEST(previous.ms > 0.0);  // timed in the final comparison, not only screened
}

// The search space is derived from the knob table: every searched knob is a row of it, read by that
// strategy, its values inside the row's range, its default the row's default.
BOOST_AUTO_TEST_CASE(search_space_follows_the_knob_table) {
    namespace cg = attnforge::codegen;
    const tune::SearchSpace space({"materialized", "streaming"}, 16);
    for (const std::string s : {"materialized", "streaming"}) {
        const tune::SchedulePoint d = space.default_point(s);
        std::size_t tuned = 0;
        for (const cg::KnobSpec& k : cg::knob_table)
            if (!k.tuned_values.empty() && (k.strategies & cg::strategy_bit(cg::parse_strategy(s)))) ++tuned;
        BOOST_TEST(space.knobs(s).size() == tuned);
        for (const auto& r : space.knobs(s)) {
            const cg::KnobSpec* k = cg::find_knob(r.name);
            BOOST_REQUIRE_MESSAGE(k, r.name << " is not in the knob table");
            BOOST_TEST((k->strategies & cg::strategy_bit(cg::parse_strategy(s))) != 0u);
            for (int v : r.values) BOOST_TEST((k->min <= v && v <= k->max), r.name << "=" << v);
            BOOST_TEST(r.description == std::string(k->meaning));
            BOOST_TEST(d.knobs.at(r.name) == (k->is_vector_width && k->default_value == 0 ? 16 : k->default_value));
        }
    }
    // On an AVX2 target (8 lanes) the default point is the table's AVX2 defaults, as the generator's.
    const tune::SearchSpace avx2({"materialized"}, 8);
    const tune::SchedulePoint d8 = avx2.default_point("materialized");
    BOOST_TEST(d8.knobs.at("q_unroll") == cg::find_knob("q_unroll")->avx2_default);
    BOOST_TEST(d8.knobs.at("pv_unroll") == cg::find_knob("pv_unroll")->avx2_default);
    BOOST_TEST(d8.knobs.at("vector_width") == 8);
    BOOST_TEST(d8.knobs.at("q_block") == cg::find_knob("q_block")->default_value);
    // Every rule of the table is printed by --help-knobs.
    for (const cg::KnobRule& rule : cg::knob_rules)
        BOOST_TEST(space.describe().find(std::string(rule.text)) != std::string::npos);
}
