// Interval analysis of index expressions (expr.hpp): the values an expression can take over a box of indices
// (b, h, q_idx and kv_idx each in a range), and for a predicate whether it can be true there and whether it can
// be false. It classifies a block of (query, key) pairs as dead (the predicate cannot hold: the block is
// skipped), full (it cannot fail: the block needs no mask) or partial, from the expression alone, as
// FlexAttention's block mask does from its mask_mod, but with no pass over the pairs.
//
// Conservative by construction: every value the expression takes at a point of the box lies in its interval,
// also as a kernel computes it in float32 (each real operation whose operands are not all integers widens its
// bounds by a relative 2⁻¹⁶ and an absolute 2⁻⁴⁰; integer arithmetic is exact). A read of an input is unbounded
// where its values are unknown (on the host; a pre-pass reads them at run time), except that a policy that can
// read inputs (a kernel's) reads one whose indices are each one exact value (b, h, constants: a prefix length
// per sequence, a window per head) and bounds it by that value. Every "can" is the negation of a definite
// comparison, so a NaN bound (∞ − ∞, 0 · ∞) makes a result unknown, never wrong.
//
// Generic over the arithmetic of the bounds (a Scalars policy): double_scalars here, evaluated when the box is
// known; a code generator's policy (Halide expressions, IEEE float64) bounds the blocks of a kernel's tiles
// inside the kernel. Which values are integers is known from the expression alone (`integral`), as a
// kernel's types are.
#pragma once

#include <attnforge/dsl/expr.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace attnforge::dsl::ex {

// Bounds in doubles.
struct double_scalars {
    using real = double;
    using boolean = bool;
    static real constant(double v) { return v; }
    static real infinity() { return std::numeric_limits<double>::infinity(); }
    static real min(real a, real b) { return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b); }
    static real max(real a, real b) { return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b); }
    static real floor(real a) { return std::floor(a); }
    static real abs(real a) { return std::abs(a); }
    static real tanh(real a) { return std::tanh(a); }
    static real exp(real a) { return std::exp(a); }
    static real exp2(real a) { return std::exp2(a); }
    static real log(real a) { return std::log(a); }
    static boolean is_nan(real a) { return std::isnan(a); }
    static real pick(boolean c, real a, real b) { return c ? a : b; }
    static boolean all(boolean a, boolean b) { return a && b; }
    static boolean any(boolean a, boolean b) { return a || b; }
    static boolean negate(boolean a) { return !a; }
    static boolean truth(bool a) { return a; }
    static real bind(real a) { return a; }
    static boolean bind(boolean a) { return a; }
};

template <class S>
struct basic_interval {
    using real = typename S::real;
    real lo = -S::infinity();
    real hi = S::infinity();
    // Every value in it is an integer computed exactly (indices, integer constants, sums of them): known from the
    // expression, as a kernel's integer types are. Exactness beyond 2²⁴ is checked on the bounds where it matters.
    bool integral = false;
    // A quotient of integers (q_idx / 128): the floors of its exact bounds, which a kernel's float32 quotient
    // floors to as well below 2²² (its rounding error, under (|x| + |y|)·2⁻²⁴ / |y|, is less than its distance
    // 1/|y| to any other integer), so that floor() stays exact (chunks, dilation) where the bounds are widened.
    bool has_floor = false;
    real floor_lo = -S::infinity(), floor_hi = S::infinity();
    // One value, known exactly (lo, and hi the same): a constant, b or h over a block, integer arithmetic of
    // those, a value read at such indices. A read whose indices are all exact can be read (interval_backend).
    bool exact = false;

    // A whole constant below 2³⁰ is an integer in a kernel too (codegen's HalideBackend::constant).
    static basic_interval point(double v) {
        return single(S::constant(v), v == std::floor(v) && std::abs(v) < 0x1p30);
    }
    static basic_interval single(real v, bool integral) {
        return {v, v, integral, false, -S::infinity(), S::infinity(), true};
    }
    static basic_interval range(real lo, real hi) { return {lo, hi, true}; }  // of integer indices
    static basic_interval unbounded() { return {}; }
};

template <class S>
struct basic_truth {
    typename S::boolean can_be_true = S::truth(true), can_be_false = S::truth(true);
};

// The placeholders' ranges: a block of pairs.
template <class S>
struct basic_interval_env {
    basic_interval<S> score, b, h, q_idx, kv_idx;
};

using interval = basic_interval<double_scalars>;
using truth = basic_truth<double_scalars>;
using interval_env = basic_interval_env<double_scalars>;

template <class S>
struct interval_backend {
    using I = basic_interval<S>;
    using T = basic_truth<S>;
    using real = typename S::real;
    using boolean = typename S::boolean;

    I constant(double v) const { return I::point(v); }

    // A policy with read(in, indices...) (a kernel's: the input's value, its indices rounded down and clamped as
    // every read's) reads an input at exact indices; anything else is unknown.
    template <class In, class... Index>
    I read(In in, const Index&... index) const {
        if constexpr (requires { S::read(in, index.lo...); }) {
            if ((index.exact && ...)) {
                constexpr bool integer = [] {
                    if constexpr (requires { In::kind::integer; })
                        return In::kind::integer;
                    else
                        return false;
                }();
                return share(I::single(S::read(in, index.lo...), integer));
            }
        }
        return I::unbounded();
    }

    // Each result is shared (S::bind): a symbolic policy names it once, so that the operations reading it
    // twice (a NaN-safe min, a rounding) do not copy it. Integer arithmetic of exact values is exact (below 2²⁴;
    // where a bound was widened past that, an index it gives clamps to the last element either way).
    template <class Op, class... A>
    auto call(Op, const A&... a) const {
        auto r = compute(Op{}, a...);
        if constexpr (std::is_same_v<decltype(r), I> && (std::is_same_v<A, I> && ...)) {
            if ((a.exact && ...) && r.integral) {
                r.hi = r.lo;
                r.exact = true;
            }
        }
        return share(r);
    }

private:
    static I share(I r) {
        r.lo = S::bind(r.lo);
        r.hi = r.exact ? r.lo : S::bind(r.hi);
        if (r.has_floor) {
            r.floor_lo = S::bind(r.floor_lo);
            r.floor_hi = S::bind(r.floor_hi);
        }
        return r;
    }
    static T share(T t) {
        t.can_be_true = S::bind(t.can_be_true);
        t.can_be_false = S::bind(t.can_be_false);
        return t;
    }

    template <class Op, class... A>
    static auto compute(Op, const A&... a) {
        namespace op = dsl::ex::op;
        if constexpr (std::is_same_v<Op, op::logical_and>)
            return logical_and(a...);
        else if constexpr (std::is_same_v<Op, op::logical_or>)
            return logical_or(a...);
        else if constexpr (std::is_same_v<Op, op::logical_not>)
            return logical_not(a...);
        else if constexpr (std::is_same_v<Op, op::select>)
            return select(a...);
        else if constexpr (Op::result == value_type::boolean)
            return compare(Op{}, a...);
        else
            return arithmetic(Op{}, a...);
    }

    static real magnitude(const I& x) { return S::max(S::abs(x.lo), S::abs(x.hi)); }
    static boolean below(const real& x, double limit) { return S::negate(x >= S::constant(limit)); }

    // A NaN bound becomes the end it stands for; a real operation's result is widened outward for float32
    // rounding unless it is exact integer arithmetic (below 2²⁴, where a kernel's float32 holds integers too).
    static I rounded(I r) {
        r.lo = S::pick(S::is_nan(r.lo), -S::infinity(), r.lo);
        r.hi = S::pick(S::is_nan(r.hi), S::infinity(), r.hi);
        const real lo = r.lo - S::abs(r.lo) * S::constant(0x1p-16) - S::constant(0x1p-40);
        const real hi = r.hi + S::abs(r.hi) * S::constant(0x1p-16) + S::constant(0x1p-40);
        if (!r.integral) return {lo, hi};
        const boolean exact = below(magnitude(r), 0x1p24);
        r.lo = S::pick(exact, r.lo, lo);
        r.hi = S::pick(exact, r.hi, hi);
        return r;
    }

    static I hull(const real& a, const real& b, const real& c, const real& d, bool integral) {
        return {S::min(S::min(a, b), S::min(c, d)), S::max(S::max(a, b), S::max(c, d)), integral};
    }

    static T logical_and(const T& x, const T& y) {
        return {S::all(x.can_be_true, y.can_be_true), S::any(x.can_be_false, y.can_be_false)};
    }
    static T logical_or(const T& x, const T& y) {
        return {S::any(x.can_be_true, y.can_be_true), S::all(x.can_be_false, y.can_be_false)};
    }
    static T logical_not(const T& x) { return {x.can_be_false, x.can_be_true}; }

    static I select(const T& c, const I& x, const I& y) {
        const boolean only_x = S::negate(c.can_be_false), only_y = S::negate(c.can_be_true);
        return {S::pick(only_x, x.lo, S::pick(only_y, y.lo, S::min(x.lo, y.lo))),
                S::pick(only_x, x.hi, S::pick(only_y, y.hi, S::max(x.hi, y.hi))), x.integral && y.integral};
    }

    // x < y can be true unless x ≥ y everywhere (x.lo ≥ y.hi); it can be false unless x < y everywhere.
    template <class Op>
    static T compare(Op, const I& x, const I& y) {
        namespace op = dsl::ex::op;
        if constexpr (std::is_same_v<Op, op::lt>) {
            return {S::negate(x.lo >= y.hi), S::negate(x.hi < y.lo)};
        } else if constexpr (std::is_same_v<Op, op::le>) {
            return {S::negate(x.lo > y.hi), S::negate(x.hi <= y.lo)};
        } else if constexpr (std::is_same_v<Op, op::gt>) {
            return compare(op::lt{}, y, x);
        } else if constexpr (std::is_same_v<Op, op::ge>) {
            return compare(op::le{}, y, x);
        } else if constexpr (std::is_same_v<Op, op::eq>) {
            // Equal everywhere only where both are one exact integer, the same.
            boolean same_point = S::truth(false);
            if (x.integral && y.integral)
                same_point = S::all(S::all(x.lo == x.hi, y.lo == y.hi), S::all(x.lo == y.lo, below(magnitude(x), 0x1p24)));
            return {S::negate(S::any(x.hi < y.lo, y.hi < x.lo)), S::negate(same_point)};
        } else {
            return logical_not(compare(op::eq{}, x, y));
        }
    }

    template <class F>
    static I increasing(const I& x, F f) {
        return rounded({f(x.lo), f(x.hi)});
    }

    template <class Op>
    static I arithmetic(Op, const I& x) {
        namespace op = dsl::ex::op;
        if constexpr (std::is_same_v<Op, op::neg>) {
            return {-x.hi, -x.lo, x.integral};
        } else if constexpr (std::is_same_v<Op, op::abs>) {
            const boolean positive = x.lo >= S::constant(0), negative = x.hi <= S::constant(0);
            return {S::pick(positive, x.lo, S::pick(negative, -x.hi, S::constant(0))),
                    S::pick(positive, x.hi, S::pick(negative, -x.lo, S::max(-x.lo, x.hi))), x.integral};
        } else if constexpr (std::is_same_v<Op, op::floor>) {
            // floor is exact on what it is given (a widened operand is already outward), and on a quotient of
            // integers the floors of its exact bounds.
            I r{S::floor(x.lo), S::floor(x.hi), true};
            if (x.has_floor) r = {x.floor_lo, x.floor_hi, true};
            return rounded(r);
        } else if constexpr (std::is_same_v<Op, op::tanh>) {
            return increasing(x, [](const real& v) { return S::tanh(v); });
        } else if constexpr (std::is_same_v<Op, op::exp>) {
            return increasing(x, [](const real& v) { return S::exp(v); });
        } else if constexpr (std::is_same_v<Op, op::exp2>) {
            return increasing(x, [](const real& v) { return S::exp2(v); });
        } else {
            static_assert(std::is_same_v<Op, op::log>, "interval_backend: an operation without bounds");
            // The log of a negative number is NaN: unknown there (NaN bounds become the ends).
            const I r = increasing(x, [](const real& v) { return S::log(v); });
            const boolean positive = x.lo > S::constant(0);
            return {S::pick(positive, r.lo, -S::infinity()), S::pick(positive, r.hi, S::infinity())};
        }
    }

    template <class Op>
    static I arithmetic(Op, const I& x, const I& y) {
        namespace op = dsl::ex::op;
        const bool integral = x.integral && y.integral;
        if constexpr (std::is_same_v<Op, op::add>) {
            return rounded({x.lo + y.lo, x.hi + y.hi, integral});
        } else if constexpr (std::is_same_v<Op, op::sub>) {
            return rounded({x.lo - y.hi, x.hi - y.lo, integral});
        } else if constexpr (std::is_same_v<Op, op::mul>) {
            return rounded(hull(x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi, integral));
        } else if constexpr (std::is_same_v<Op, op::div>) {
            // Real division; a divisor that may be 0 leaves the quotient unknown.
            const boolean nonzero = S::any(y.lo > S::constant(0), y.hi < S::constant(0));
            const I exact = hull(x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi, false);
            I r = rounded(exact);
            if (integral) {
                const boolean small = below(S::max(magnitude(x), magnitude(y)), 0x1p22);
                r.has_floor = true;
                r.floor_lo = S::pick(small, S::floor(exact.lo), S::floor(r.lo));
                r.floor_hi = S::pick(small, S::floor(exact.hi), S::floor(r.hi));
            }
            r.lo = S::pick(nonzero, r.lo, -S::infinity());
            r.hi = S::pick(nonzero, r.hi, S::infinity());
            r.floor_lo = S::pick(nonzero, r.floor_lo, -S::infinity());
            r.floor_hi = S::pick(nonzero, r.floor_hi, S::infinity());
            return r;
        } else if constexpr (std::is_same_v<Op, op::min>) {
            return {S::min(x.lo, y.lo), S::min(x.hi, y.hi), integral};
        } else {
            static_assert(std::is_same_v<Op, op::max>, "interval_backend: an operation without bounds");
            return {S::max(x.lo, y.lo), S::max(x.hi, y.hi), integral};
        }
    }
};

// What a predicate can be over a block: dead (never holds), full (always holds) or partial.
enum class block_kind { dead, full, partial };

template <class S, class Predicate>
basic_truth<S> truth_over(const Predicate& predicate, const basic_interval_env<S>& box) {
    static_assert(Predicate::type == value_type::boolean, "truth_over: a predicate (a boolean expression)");
    return evaluate(predicate, box, interval_backend<S>{});
}

template <class Predicate>
block_kind classify_block(const Predicate& predicate, const interval_env& box) {
    const truth t = truth_over(predicate, box);
    return !t.can_be_true ? block_kind::dead : !t.can_be_false ? block_kind::full : block_kind::partial;
}

// Whether the analysis finds any block of `kind` of `predicate` among blocks of 64 queries × 64 keys over the
// first 4096 positions (batch entry 0, heads 0 to 7).
template <class Predicate>
bool finds_blocks(const Predicate& predicate, block_kind kind) {
    constexpr int tile = 64, positions = 4096, heads = 8;
    for (int h = 0; h < heads; ++h)
        for (int q = 0; q < positions; q += tile)
            for (int k = 0; k < positions; k += tile) {
                interval_env box;
                box.b = interval::point(0);
                box.h = interval::point(h);
                box.q_idx = interval::range(q, q + tile - 1);
                box.kv_idx = interval::range(k, k + tile - 1);
                if (classify_block(predicate, box) == kind) return true;
            }
    return false;
}

// Dead blocks: where the analysis finds none, its bounds skip nothing a kernel could skip (they give up on
// the expression, or the predicate keeps pairs everywhere), which a code generator says.
template <class Predicate>
bool finds_dead_blocks(const Predicate& predicate) {
    return finds_blocks(predicate, block_kind::dead);
}

// Full blocks: where the analysis finds some, a kernel visits them without evaluating the predicate.
template <class Predicate>
bool finds_full_blocks(const Predicate& predicate) {
    return finds_blocks(predicate, block_kind::full);
}

}  // namespace attnforge::dsl::ex
