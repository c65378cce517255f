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
// the host's, for every tile of the grid.
template <class Spec>
void same_classes(const Spec& spec, int tile, int offset, const char* what) {
    Halide::Var qt("qt"), kt("kt");
    const Halide::Expr q0 = qt * tile + offset, k0 = kt * tile;
    const cg::BlockTruth t = cg::block_truth(spec.expr, {q0, q0 + (tile - 1), k0, k0 + (tile - 1), 0, 0});
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
            const int host = static_cast<int>(ex::classify_block(spec.expr, box));
            dead += host == 0;
            full += host == 1;
            BOOST_TEST_CONTEXT(what << ": tile (" << i << ", " << j << ")") { BOOST_TEST(kernel(i, j) == host); }
        }
    BOOST_TEST_MESSAGE(what << ": " << dead << " dead and " << full << " full of " << tiles * tiles);
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
