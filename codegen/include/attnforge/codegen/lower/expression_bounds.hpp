// Bounds of a predicate over a block of (query, key) pairs, computed inside a kernel: the interval analysis of
// dsl/passes/expr_intervals.hpp with Halide expressions for its bounds, so that a block whose indices are
// known only at run time (a tile of a run-time length) is classified dead, full or partial by a few scalar
// operations instead of by evaluating every pair. Bounds are float64 and IEEE (lower/ieee.hpp): infinities
// stand for unbounded ends, and a NaN makes a comparison false, whose negation ("can be") stays true.
#pragma once

#include <attnforge/codegen/lower/expressions.hpp>
#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lowering.hpp>
#include <attnforge/dsl/passes/expr_intervals.hpp>

#include <Halide.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attnforge::codegen {

struct HalideScalars {
    using real = Halide::Expr;
    using boolean = Halide::Expr;
    static real constant(double v) { return Halide::Expr(v); }
    static real infinity() { return Halide::Expr(std::numeric_limits<double>::infinity()); }
    static real min(const real& a, const real& b) { return Halide::select(is_nan(a) || is_nan(b), a + b, Halide::min(a, b)); }
    static real max(const real& a, const real& b) { return Halide::select(is_nan(a) || is_nan(b), a + b, Halide::max(a, b)); }
    static real floor(const real& a) { return Halide::floor(a); }
    static real abs(const real& a) { return Halide::abs(a); }
    static real tanh(const real& a) { return Halide::tanh(a); }
    static real exp(const real& a) { return Halide::exp(a); }
    static real exp2(const real& a) { return Halide::pow(Halide::Expr(2.0), a); }
    static real log(const real& a) { return Halide::log(a); }
    static boolean is_nan(const real& a) { return Halide::is_nan(a); }
    static real pick(const boolean& c, const real& a, const real& b) { return Halide::select(c, a, b); }
    static boolean all(const boolean& a, const boolean& b) { return a && b; }
    static boolean any(const boolean& a, const boolean& b) { return a || b; }
    static boolean negate(const boolean& a) { return !a; }
    static boolean truth(bool a) { return Halide::Internal::make_bool(a); }
    // A result named by a let (block_truth wraps the lets around its answer), so that its readers copy a name.
    static real bind(const real& a);
    // An input at exact indices (a prefix length at b, a window at h): its value, read from its buffer so that a
    // reduction's condition on it stays a condition on inputs (lower/expressions.hpp, read_input).
    template <class In, class... Index>
    static real read(In, const Index&... index);
};

using HalideInterval = dsl::ex::basic_interval<HalideScalars>;

// The box of a block of pairs (positions and keys int32 or float64 expressions).
inline dsl::ex::basic_interval_env<HalideScalars> pair_box(const PairBlock& block) {
    auto wide = [](const Halide::Expr& e) { return Halide::cast<double>(e); };
    dsl::ex::basic_interval_env<HalideScalars> box;
    box.q_idx = HalideInterval::range(wide(block.q_first), wide(block.q_last));
    box.kv_idx = HalideInterval::range(wide(block.k_first), wide(block.k_last));
    box.b = HalideInterval::single(wide(block.b), true);
    box.h = HalideInterval::single(wide(block.h), true);
    return box;
}

namespace bounds_detail {

// The lets of the block_truth being built on this thread (bind outside one leaves its argument as it is), and the
// inputs its reads read.
inline thread_local std::vector<std::pair<std::string, Halide::Expr>>* lets = nullptr;
inline thread_local const LoweredInputs* inputs = nullptr;

}  // namespace bounds_detail

inline HalideScalars::real HalideScalars::bind(const real& a) {
    using namespace Halide::Internal;
    if (!bounds_detail::lets || a.as<Variable>() || is_const(a)) return a;
    const std::string name = unique_name("bound");
    bounds_detail::lets->emplace_back(name, a);
    return Variable::make(a.type(), name);
}

template <class In, class... Index>
HalideScalars::real HalideScalars::read(In, const Index&... index) {
    const LoweredInputs* inputs = bounds_detail::inputs;
    if (!inputs) throw std::logic_error("attnforge: a predicate's bounds read an input outside block_truth");
    return Halide::cast<double>(read_input(inputs->find(In::name.view())->second, {index...}, true));
}

// The bounds read their operands more than once (a NaN-safe min reads each twice): as a tree the expression
// would grow exponentially with the predicate's depth (the dilated window did not compile in minutes). Each
// operation's result is named by a let instead, so the answer grows linearly.
// `inputs`: what the predicate's reads read (reads at exact indices are bounded by their value).
template <class Predicate>
BlockTruth block_truth(const Predicate& predicate, const PairBlock& block, const LoweredInputs& inputs) {
    const dsl::ex::basic_interval_env<HalideScalars> box = pair_box(block);
    std::vector<std::pair<std::string, Halide::Expr>> lets;
    bounds_detail::lets = &lets;
    bounds_detail::inputs = &inputs;
    const dsl::ex::basic_truth<HalideScalars> t = dsl::ex::truth_over(predicate, box);
    bounds_detail::lets = nullptr;
    bounds_detail::inputs = nullptr;
    auto wrapped = [&](Halide::Expr e) {
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) e = Halide::Internal::Let::make(it->first, it->second, e);
        return ieee(e);
    };
    return {wrapped(t.can_be_true), wrapped(t.can_be_false)};
}

}  // namespace attnforge::codegen
