// The online-softmax merge of a key block into a running state, shared by the streaming and decode
// cores: scores in base 2, m' = max(m, m_b), l' = l·2^(m−m') + l_b·2^(m_b−m'), acc' likewise.
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/softmax_exp.hpp>

#include <Halide.h>

namespace attnforge::codegen::detail {

// The new max and the factors of the old state and of the block. One exp for both factors: the larger
// max gets factor 1, the other 2^(smaller − larger) (0 when the smaller is −∞: an empty state or a
// wholly masked block). Both −∞: nothing yet, both 0.
struct MergeFactors {
    Halide::Expr m_new, keep_old, take_block;
};

inline MergeFactors merge_factors(const Halide::Expr& m_old, const Halide::Expr& m_block) {
    const Halide::Expr inf = minus_infinity();
    const Halide::Expr m_new = Halide::max(m_old, m_block);
    const Halide::Expr smaller = Halide::min(m_old, m_block);
    const Halide::Expr f = ieee(Halide::select(m_new == inf, 0.0f, softmax_exp2(smaller - m_new)));
    return {m_new, ieee(Halide::select(m_old == m_new && m_new != inf, 1.0f, f)),
            ieee(Halide::select(m_old == m_new, f, 1.0f))};
}

}  // namespace attnforge::codegen::detail
