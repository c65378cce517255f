// Every function of the expression language (dsl/expr.hpp) as kernels evaluate it (the Halide backend,
// compiled just in time in vectors of the target's width with Halide's fast-math flags) against the
// interpreter's float64 <cmath>: each within its stated relative error over the range a score
// modifier reaches, the IEEE special values kept (no NaN from a number, ±∞ where the math says), and
// none of them a scalar library call (the assembly of each holds no call at all).
#define BOOST_TEST_MODULE codegen_vector_math
#include <attnforge/codegen/lower/expressions.hpp>
#include <attnforge/interp/interpreter.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace ex = attnforge::dsl::ex;
namespace cg = attnforge::codegen;
namespace interp = attnforge::interp;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
const float not_a_number = std::numeric_limits<float>::quiet_NaN();

// f(score) as a kernel computes it: the score placeholder reads a buffer of arguments.
template <class E>
Halide::Func kernel_of(const E& e, Halide::Buffer<float>& args) {
    Halide::Var i("i");
    Halide::Func f("f");
    f(i) = ex::evaluate(ex::as_expr(e), cg::HalideEnv{args(i), 0, 0, 0, 0}, cg::HalideBackend{nullptr});
    f.vectorize(i, Halide::get_jit_target_from_environment().natural_vector_size<float>(),
                Halide::TailStrategy::GuardWithIf);
    return f;
}

template <class E>
std::vector<float> kernel_values(const E& e, const std::vector<float>& xs) {
    Halide::Buffer<float> args(static_cast<int>(xs.size()));
    for (std::size_t i = 0; i < xs.size(); ++i) args(static_cast<int>(i)) = xs[i];
    const Halide::Buffer<float> out =
        kernel_of(e, args).realize({static_cast<int>(xs.size())}, Halide::get_jit_target_from_environment());
    return {out.begin(), out.end()};
}

// The interpreter's value of e at score = x (float64 throughout).
template <class E>
double interpreter_value(const E& e, float x) {
    const interp::detail::Env env{static_cast<double>(x), 0.0, 0.0, 0.0, 0.0};
    return ex::evaluate(ex::as_expr(e), env, interp::detail::DoubleBackend{nullptr});
}

// Largest |kernel − exact| / max(|exact|, floor) over xs (floor: below it the absolute error counts).
template <class E>
void within(const E& e, const std::vector<float>& xs, double bound, double floor, const char* what) {
    const std::vector<float> ys = kernel_values(e, xs);
    double worst = 0;
    float worst_x = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double exact = interpreter_value(e, xs[i]);
        const double error = std::abs(double(ys[i]) - exact) / std::max(std::abs(exact), floor);
        if (!(error <= worst)) worst = error, worst_x = xs[i];
    }
    BOOST_TEST_MESSAGE(what << ": largest relative error " << worst << " at x = " << worst_x);
    BOOST_TEST(worst <= bound, what << ": largest relative error " << worst << " at x = " << worst_x
                                    << " (bound " << bound << ")");
}

std::vector<float> sweep(double from, double to, int n) {
    std::vector<float> xs;
    for (int i = 0; i <= n; ++i) xs.push_back(static_cast<float>(from + (to - from) * i / n));
    return xs;
}

template <class E>
void special_values(const E& e, const std::vector<std::pair<float, float>>& cases, const char* what) {
    std::vector<float> xs;
    for (const auto& c : cases) xs.push_back(c.first);
    const std::vector<float> ys = kernel_values(e, xs);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const float expected = cases[i].second;
        const bool same = std::isnan(expected) ? std::isnan(ys[i]) : ys[i] == expected;
        BOOST_TEST(same, what << "(" << xs[i] << ") = " << ys[i] << ", expected " << expected);
    }
}

const auto s = ex::score_placeholder;

}  // namespace

BOOST_AUTO_TEST_CASE(tanh_over_the_real_line) {
    // Soft-capping reaches tanh(score / cap) with any score; the clamp at 9 and the cap at 1 sampled densely.
    std::vector<float> xs = sweep(-12, 12, 400000);
    for (float x : sweep(7.5, 9.5, 20000)) xs.push_back(x), xs.push_back(-x);
    for (float x : {1e-30f, 1e-10f, 1e-4f, 0.1f}) xs.push_back(x), xs.push_back(-x);
    within(ex::tanh(s), xs, 4e-7, 1e-30, "tanh");
    special_values(ex::tanh(s), {{inf, 1.0f}, {-inf, -1.0f}, {0.0f, 0.0f}, {100.0f, 1.0f}, {-100.0f, -1.0f}, {not_a_number, not_a_number}},
                   "tanh");
}

BOOST_AUTO_TEST_CASE(soft_cap_as_the_variant_writes_it) {
    within(ex::tanh(s / 20.0) * 20.0, sweep(-2000, 2000, 400000), 4e-7, 1e-30, "20 tanh(s / 20)");
}

BOOST_AUTO_TEST_CASE(exp_exp2_and_log) {
    // Halide's own inline polynomials (Halide::exp, Halide::pow(2, x), Halide::log).
    within(ex::exp(s), sweep(-87, 88, 400000), 5e-7, 1e-30, "exp");
    within(ex::exp2(s), sweep(-126, 127, 400000), 3e-7, 1e-30, "exp2");
    within(ex::log(s), sweep(1e-6, 1e6, 400000), 3e-7, 1e-30, "log (relative to log x)");
    within(ex::log(s), sweep(0.5, 2.0, 400000), 2e-7, 1.0, "log near 1 (absolute)");
    special_values(ex::exp(s), {{-inf, 0.0f}, {-200.0f, 0.0f}, {0.0f, 1.0f}, {inf, inf}, {100.0f, inf},
                                {not_a_number, not_a_number}}, "exp");
    special_values(ex::exp2(s), {{-inf, 0.0f}, {-200.0f, 0.0f}, {0.0f, 1.0f}, {10.0f, 1024.0f}, {inf, inf},
                                 {200.0f, inf}, {not_a_number, not_a_number}}, "exp2");
    special_values(ex::log(s), {{1.0f, 0.0f}, {0.0f, -inf}, {-1.0f, not_a_number}, {inf, inf},
                                {not_a_number, not_a_number}}, "log");
}

BOOST_AUTO_TEST_CASE(exact_functions) {
    within(ex::floor(s), sweep(-1000, 1000, 100000), 0, 1e-30, "floor");
    within(ex::abs(s), sweep(-1000, 1000, 100000), 0, 1e-30, "abs");
    within(ex::min(s, 3.5), sweep(-10, 10, 1000), 0, 1e-30, "min");
    within(ex::max(s, 3.5), sweep(-10, 10, 1000), 0, 1e-30, "max");
    within(ex::select(s < 0.0, -s, s * 2.0), sweep(-10, 10, 1000), 0, 1e-30, "select");
}

// The assembly of each function holds no call: straight-line vector code, never a libm routine per lane.
BOOST_AUTO_TEST_CASE(no_library_calls) {
    const std::vector<std::pair<std::string, std::function<Halide::Func(Halide::Buffer<float>&)>>> functions = {
        {"tanh", [](Halide::Buffer<float>& a) { return kernel_of(ex::tanh(s), a); }},
        {"exp", [](Halide::Buffer<float>& a) { return kernel_of(ex::exp(s), a); }},
        {"exp2", [](Halide::Buffer<float>& a) { return kernel_of(ex::exp2(s), a); }},
        {"log", [](Halide::Buffer<float>& a) { return kernel_of(ex::log(s), a); }},
        {"floor", [](Halide::Buffer<float>& a) { return kernel_of(ex::floor(s), a); }},
    };
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnforge_vector_math";
    std::filesystem::create_directories(dir);
    const Halide::Target target = Halide::get_host_target().with_feature(Halide::Target::NoRuntime);
    for (const auto& [name, make] : functions) {
        Halide::Buffer<float> args(64);
        Halide::Func f = make(args);
        const std::string file = (dir / (name + ".s")).string();
        f.compile_to_assembly(file, {}, "f_" + name, target);
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        // Halide's own error reporting (halide_error_*) is a call too; anything else is a library routine.
        const std::regex call(R"(\bcall[q]?\s+(\S+))");
        const std::string asm_text = text.str();
        std::vector<std::string> calls;
        for (std::sregex_iterator it(asm_text.begin(), asm_text.end(), call), end; it != end; ++it)
            if ((*it)[1].str().find("halide_") == std::string::npos) calls.push_back((*it)[1].str());
        BOOST_TEST(calls.empty(), name << " calls " << (calls.empty() ? "" : calls.front()) << " (" << file << ")");
    }
}
