// Block classes computed inside a kernel (codegen/lower/expression_bounds.hpp) are the ones the DSL's interval
// analysis gives on the host (dsl/passes/expr_intervals.hpp, checked pair by pair in tests/dsl): every
// predicate is compiled just in time over a grid of tiles of run-time position and compared class by class.
#define BOOST_TEST_MODULE codegen_expression_bounds
#include "../dsl/example_predicates.hpp"
#include <attnforge/codegen/lower/expression_bounds.hpp>
#include <attnforge/dsl.hpp>

#include <boost/test/unit_test.hpp>

namespace dsl = attnforge::dsl;
namespace ex = attnforge::dsl::ex;
namespace cg = attnforge::codegen;

namespace {

constexpr int tiles = 40;

// The class of tile (qt, kt) of size tile × tile as the kernel computes it (0 dead, 1 full, 2 partial) against
// the host's, for every tile of the grid; the kernel's of `spec` (its reads reading `inputs`, at batch entry b),
// the host's of `host_spec`.
template <class Spec, class HostSpec>
void same_classes(const Spec& spec, const HostSpec& host_spec, int tile, int offset, const char* what,
                  const cg::LoweredInputs& inputs = {}, int b = 0) {
    Halide::Var qt("qt"), kt("kt");
    const Halide::Expr q0 = qt * tile + offset, k0 = kt * tile;
    const cg::BlockTruth t = cg::block_truth(spec.expr, {q0, q0 + (tile - 1), k0, k0 + (tile - 1), 0, b}, inputs);
    Halide::Func kind("kind");
    kind(qt, kt) = Halide::select(!t.can_be_true, 0, !t.can_be_false, 1, 2);
    const Halide::Buffer<int> kernel = kind.realize({tiles, tiles});
    int dead = 0, full = 0;
    for (int i = 0; i < tiles; ++i)
        for (int j = 0; j < tiles; ++j) {
            const double a = i * tile + offset, c = j * tile;
            ex::interval_env box;
            box.b = box.h = ex::interval::point(0);
            box.q_idx = ex::interval::range(a, a + tile - 1);
            box.kv_idx = ex::interval::range(c, c + tile - 1);
            const int host = static_cast<int>(ex::classify_block(host_spec.expr, box));
            dead += host == 0;
            full += host == 1;
            BOOST_TEST_CONTEXT(what << ": tile (" << i << ", " << j << ")") { BOOST_TEST(kernel(i, j) == host); }
        }
    BOOST_TEST_MESSAGE(what << ": " << dead << " dead and " << full << " full of " << tiles * tiles);
}

template <class Spec>
void same_classes(const Spec& spec, int tile, int offset, const char* what) {
    same_classes(spec, spec, tile, offset, what);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_kernels_classes_are_the_hosts) {
    using namespace example_predicates;
    for (int tile : {1, 16, 32})
        for (int offset : {0, 5}) {
            same_classes(window, tile, offset, "window");
            same_classes(chunked, tile, offset, "chunked");
            same_classes(dilated, tile, offset, "dilated");
            same_classes(global_and_window, tile, offset, "global_and_window");
            same_classes(banded_by_abs, tile, offset, "banded_by_abs");
            same_classes(real_scaled, tile, offset, "real_scaled");
            same_classes(clipped, tile, offset, "clipped");
            same_classes(documents, tile, offset, "documents");
        }
}

// A predicate that reads an input at b alone (a window per sequence) is bounded inside the kernel by the value it
// reads: its classes are those of the same predicate with that value written in (on the host, where no input is
// known, it is unbounded).
constexpr auto windows = dsl::batch_indices<"windows">();

BOOST_AUTO_TEST_CASE(a_read_at_the_batch_entry_is_bounded_by_its_value) {
    constexpr auto read_window =
        dsl::predicate([](auto b, auto, auto q, auto kv) { return kv <= q && q - kv <= windows(b); });
    static_assert(ex::checks<decltype(read_window.expr)>::reads_at_points);
    static_assert(!ex::checks<decltype(example_predicates::documents.expr)>::reads_at_points);
    constexpr auto window_256 = dsl::predicate([](auto, auto, auto q, auto kv) { return kv <= q && q - kv <= 256; });
    constexpr auto window_0 = dsl::predicate([](auto, auto, auto q, auto kv) { return kv <= q && q - kv <= 0; });
    constexpr auto window_37 = dsl::predicate([](auto, auto, auto q, auto kv) { return kv <= q && q - kv <= 37; });
    Halide::Buffer<int> values(3);
    values(0) = 256;
    values(1) = 0;
    values(2) = 37;
    Halide::Var x("x");
    Halide::Func f("windows_in");
    f(x) = values(x);
    const cg::LoweredInputs inputs{
        {"windows", cg::Lowered{f, {3}, true, [values](const std::vector<Halide::Expr>& at) { return values(at); }, {}, {}}}};
    for (int tile : {1, 16, 32})
        for (int offset : {0, 5}) {
            same_classes(read_window, window_256, tile, offset, "window read at b = 0", inputs, 0);
            same_classes(read_window, window_0, tile, offset, "window read at b = 1", inputs, 1);
            same_classes(read_window, window_37, tile, offset, "window read at b = 2", inputs, 2);
        }
}
