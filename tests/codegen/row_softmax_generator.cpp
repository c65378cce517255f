// row_softmax: softmax over the last axis of a 2-D float32 buffer, written the way every attnforge
// kernel must be: subtract the row max, and give an all-zero row (never NaN) when every entry of the
// row is -inf (a fully masked query). It is the toolchain proof of the project: a generator built
// ahead of time by add_halide_library and called from a Boost.Test test (tests/codegen).
#include <Halide.h>

namespace {

using namespace Halide;

class RowSoftmax : public Generator<RowSoftmax> {
public:
    // Interface: scores (Lk, Lq) in Halide's column-major index order, i.e. a row-major (Lq, Lk) array.
    Input<Buffer<float, 2>> scores{"scores"};
    Output<Buffer<float, 2>> weights{"weights"};

    void generate() {
        Var k{"k"}, q{"q"};
        RDom r(0, scores.dim(0).extent(), "r");

        // Algorithm.
        row_max(q) = maximum(scores(r, q));
        // exp(-inf - m) is exactly 0 with Halide::exp; fast_exp(-inf) would be NaN, so it is not used.
        // A fully masked row has m = -inf; clamping the shift keeps -inf - (-inf) out of the exp.
        Expr finite_max = select(row_max(q) == Expr(-std::numeric_limits<float>::infinity()), 0.0f, row_max(q));
        exps(k, q) = exp(scores(k, q) - finite_max);
        row_sum(q) = sum(exps(r, q));
        weights(k, q) = select(row_sum(q) > 0.0f, exps(k, q) / row_sum(q), 0.0f);

        // Estimates (used by autoschedulers and recorded in the generated metadata).
        scores.set_estimates({{0, 512}, {0, 512}});
        weights.set_estimates({{0, 512}, {0, 512}});

        // Schedule: one row per task, rows in parallel, the key axis vectorized.
        const int lanes = natural_vector_size<float>();
        row_max.compute_at(weights, q);
        row_sum.compute_at(weights, q);
        exps.compute_at(weights, q).vectorize(k, lanes, TailStrategy::GuardWithIf);
        weights.parallel(q).vectorize(k, lanes, TailStrategy::GuardWithIf);
    }

private:
    Func row_max{"row_max"}, exps{"exps"}, row_sum{"row_sum"};
};

}  // namespace

HALIDE_REGISTER_GENERATOR(RowSoftmax, row_softmax)
