// A read of an input inside a predicate or modifier picks the same element in kernels (the Halide
// backend) as in the interpreter: fractional index arithmetic is floored in float64 on both sides,
// indices past either end are clamped, ±inf go to the ends and NaN reads element 0. Each expression
// is compiled just in time over q_idx = 0..N-1 and compared with the interpreter's backend exactly.
#define BOOST_TEST_MODULE codegen_expressions
#include <attnforge/codegen/lower/expressions.hpp>
#include <attnforge/interp/interpreter.hpp>

#include <boost/test/unit_test.hpp>

namespace dsl = attnforge::dsl;
namespace ex = attnforge::dsl::ex;
namespace cg = attnforge::codegen;
namespace interp = attnforge::interp;

namespace {

constexpr int columns = 20000;
constexpr auto table = dsl::weight<"table", 1, columns>();  // table[0, j] = j: a read returns its index

template <class E>
void same_element_everywhere(const E& index_of_q, int n, const char* what) {
    const auto e = ex::as_expr(table(0, index_of_q));

    // Kernel side: the input as the generator binds it, a Func over (column, row).
    Halide::Buffer<float> buffer(columns, 1);
    for (int j = 0; j < columns; ++j) buffer(j, 0) = float(j);
    Halide::Var c("c"), r("r"), q("q");
    Halide::Func input("table_in");
    input(c, r) = buffer(c, r);
    std::map<std::string, cg::Lowered, std::less<>> inputs{{"table", cg::Lowered{input, {columns, 1}, true, {}, {}, {}}}};
    Halide::Func f("reads");
    f(q) = ex::evaluate(e, cg::HalideEnv{Halide::Expr(), 0, 0, q, 0}, cg::HalideBackend{&inputs});
    const Halide::Buffer<float> kernel = f.realize({n});

    // Interpreter side.
    interp::BoundInputs bound;
    interp::Tensor t({1, columns});
    for (int j = 0; j < columns; ++j) t.data[static_cast<std::size_t>(j)] = j;
    bound.tensors.emplace("table", t);
    for (int i = 0; i < n; ++i) {
        const interp::detail::Env env{0.0, 0.0, 0.0, double(i), 0.0};
        const double expected = ex::evaluate(e, env, interp::detail::DoubleBackend{&bound});
        BOOST_TEST_CONTEXT(what << " at q_idx = " << i) {
            BOOST_TEST(double(kernel(i)) == expected);
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(fractional_indices_floor_alike) {
    // In float32, q·0.7 floors one lower than in float64 at 289 of these q (q = 90: 62 vs 63).
    same_element_everywhere(ex::q_idx_placeholder * 0.7, 20000, "q_idx * 0.7");
    same_element_everywhere(ex::q_idx_placeholder / 3.0 + 0.1, 20000, "q_idx / 3 + 0.1");
}

BOOST_AUTO_TEST_CASE(indices_past_the_ends_are_clamped) {
    same_element_everywhere(ex::q_idx_placeholder * 7 - 100, 5000, "q_idx * 7 - 100 (integers)");
    same_element_everywhere(ex::q_idx_placeholder * 1.5 - 10.25, 20000, "q_idx * 1.5 - 10.25");
}

BOOST_AUTO_TEST_CASE(infinite_and_nan_indices) {
    // q_idx = 5: 1 / 0 = +inf (the last element); q_idx < 5: negative (element 0).
    same_element_everywhere(1.0 / (ex::q_idx_placeholder - 5), 20, "1 / (q_idx - 5)");
    // q_idx = 5: 0 / 0 = NaN (element 0); elsewhere 1.
    same_element_everywhere((ex::q_idx_placeholder - 5) / (ex::q_idx_placeholder - 5), 20, "(q_idx - 5) / (q_idx - 5)");
}
