// The per-score cost of what a score modifier is written with: index arithmetic, abs/min, floor, select, a table
// read, log, exp, tanh, and a whole T5 bucketed bias. Each modifier is compiled just in time over a grid of
// 4096 keys × 256 queries of stored scores, vectorized along the keys as the kernels are, and timed (median of
// 15 calls, one thread); its cost is its time per score less that of the bare score. Two columns: evaluated
// inline on every score (HalideBackend), and as the kernels lower it (lower_modifier: terms of the distance or
// of the key alone become tables computed once per call, codegen/lower/modifier_hoisting.hpp).
//   build/bench/user_variants/attnforge_modifier_costs        (docs/performance.md quotes it)
#include <attnforge/codegen/lower/modifier_hoisting.hpp>
#include <attnforge/dsl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace dsl = attnforge::dsl;
namespace ex = attnforge::dsl::ex;
namespace cg = attnforge::codegen;

namespace {

constexpr int keys = 4096, queries = 256, lanes = 16, calls = 15;
constexpr auto table = dsl::weight<"table", 8, 32>();

// Seconds per call of `modifier` over the grid, inline or as lowered.
template <class Modifier>
double seconds(const Modifier& modifier, bool as_lowered) {
    const auto expr = ex::as_expr(modifier(ex::score_placeholder, ex::b_placeholder, ex::h_placeholder,
                                           ex::q_idx_placeholder, ex::kv_idx_placeholder));
    Halide::Buffer<float> stored(keys, queries), values(32, 8);
    for (int q = 0; q < queries; ++q)
        for (int k = 0; k < keys; ++k) stored(k, q) = float((k * 7 + q * 13) % 101) / 10.0f - 5.0f;
    for (int h = 0; h < 8; ++h)
        for (int i = 0; i < 32; ++i) values(i, h) = float(i - h) / 32.0f;
    Halide::Var k("k"), q("q"), h("h"), b("b"), i("i"), j("j");
    Halide::Func input("table_in");
    input(i, j) = values(i, j);
    cg::LoweringContext ctx(cg::MaterializedPlan{});
    cg::Lowered read_table;
    read_table.func = input;
    read_table.extents = {32, 8};
    ctx.inputs.emplace("table", read_table);
    Halide::Func scores("scores");
    scores(k, q) = stored(k, q);
    const Halide::Expr score = scores(k, q);
    Halide::Expr value = as_lowered ? cg::lower_modifier(expr, score, q, k, h, b, cg::QueryPositions{}, ctx)
                                    : ex::evaluate(expr, cg::HalideEnv{score, b, h, q, k}, cg::HalideBackend{&ctx.inputs});
    if (!value.type().is_float()) value = Halide::cast<float>(value);
    Halide::Func out("out");
    out(k, q, h, b) = value;
    out.vectorize(k, lanes);
    for (Halide::Func t : ctx.roles.distance_tables)
        t.compute_root().vectorize(t.args()[0], lanes, Halide::TailStrategy::GuardWithIf);
    out.compile_jit(Halide::get_jit_target_from_environment());
    Halide::Buffer<float> result(keys, queries, 2, 1);  // two heads: a table per head
    std::vector<double> times;
    for (int c = 0; c < calls + 2; ++c) {
        const auto start = std::chrono::steady_clock::now();
        out.realize(result);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    times.erase(times.begin(), times.begin() + 2);  // warm-up
    std::nth_element(times.begin(), times.begin() + calls / 2, times.end());
    return times[calls / 2];
}

template <class Modifier>
void report(const char* what, const Modifier& modifier, double bare_inline, double bare_lowered) {
    constexpr double scores_per_call = double(keys) * queries * 2;
    const double a = (seconds(modifier, false) - bare_inline) / scores_per_call * 1e9;
    const double c = (seconds(modifier, true) - bare_lowered) / scores_per_call * 1e9;
    std::printf("| %s | %.2f | %.2f |\n", what, a, c);
}

}  // namespace

int main() {
    using namespace ex;
    const auto bare = [](auto s, auto, auto, auto, auto) { return s; };
    const double bare_inline = seconds(bare, false), bare_lowered = seconds(bare, true);
    std::printf("bare score: %.3f ns per score (stored scores read and written)\n\n",
                bare_inline / (double(keys) * queries * 2) * 1e9);
    std::printf("| modifier term (added to the score) | ns per score, inline | ns per score, as lowered |\n");
    std::printf("| --- | ---: | ---: |\n");
    report("index arithmetic `(q_idx - kv_idx) * 0.01`", [](auto s, auto, auto, auto q, auto kv) {
        return s + (q - kv) * 0.01;
    }, bare_inline, bare_lowered);
    report("`abs`, `min` of the distance", [](auto s, auto, auto, auto q, auto kv) {
        return s - min(abs(q - kv), 128) * 0.01;
    }, bare_inline, bare_lowered);
    report("`floor` of a quotient of indices", [](auto s, auto, auto, auto q, auto kv) {
        return s + floor((q + kv) / 7.0) * 0.01;
    }, bare_inline, bare_lowered);
    report("`select` on indices", [](auto s, auto, auto, auto q, auto kv) {
        return s + select(q + kv < 2000, 1.0, 0.5);
    }, bare_inline, bare_lowered);
    report("table read at an index of q and kv (a gather)", [](auto s, auto, auto h, auto q, auto kv) {
        return s + table(h, min(q + kv, 31));
    }, bare_inline, bare_lowered);
    report("table read at the clipped distance", [](auto s, auto, auto h, auto q, auto kv) {
        return s + table(h, min(abs(q - kv), 31));
    }, bare_inline, bare_lowered);
    report("`log` of an index sum", [](auto s, auto, auto, auto q, auto kv) {
        return s + log(q + kv + 1) * 0.01;
    }, bare_inline, bare_lowered);
    report("`log` of the key", [](auto s, auto, auto, auto, auto kv) {
        return s - log(kv + 1) * 0.25;
    }, bare_inline, bare_lowered);
    report("`exp` of an index sum", [](auto s, auto, auto, auto q, auto kv) {
        return s + exp((q + kv) * -0.001);
    }, bare_inline, bare_lowered);
    report("`tanh` soft-cap of the score", [](auto s, auto, auto, auto, auto) {
        return 20 * tanh(s / 20);
    }, bare_inline, bare_lowered);
    report("T5 bucketed bias (log, floor, min, select, table read)", [](auto s, auto, auto h, auto q, auto kv) {
        const auto d = q - kv;
        const auto far = min(16 + floor(log(d / 16.0) / 2.0794415416798357 * 16), 31);
        return s + table(h, select(d < 16, d, far));
    }, bare_inline, bare_lowered);
}
