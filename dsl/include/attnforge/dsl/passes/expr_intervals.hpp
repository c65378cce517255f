// Interval analysis of index expressions (expr.hpp): the values an expression can take over a box of indices
// (b, h, q_idx and kv_idx each in a range), and for a predicate whether it can be true there and whether it can
// be false. It classifies a block of (query, key) pairs as dead (the predicate cannot hold: the block is
// skipped), full (it cannot fail: the block needs no mask) or partial, from the expression alone, as
// FlexAttention's block mask does from its mask_mod, but with no pass over the pairs.
//
// Conservative by construction: every value the expression takes at a point of the box lies in its interval,
// also as a kernel computes it in float32 (each real operation whose operands are not all integers widens its
// bounds by a relative 2⁻¹⁶ and an absolute 2⁻⁴⁰; integer arithmetic is exact). A read of an input is unbounded:
// its values are known only at run time (a pre-pass reads them). Every "can" is the negation of a definite
// comparison, so a NaN bound (∞ − ∞, 0 · ∞) makes a result unknown, never wrong.
#pragma once

#include <attnforge/dsl/expr.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace attnforge::dsl::ex {

struct interval {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    bool integral = false;  // every value in it is an integer computed exactly (indices, integer constants)
    // Where it is a quotient of integers below 2²³ (q_idx / 128): the floors of its exact bounds. A kernel's
    // float32 quotient floors to the same integer as the exact one there (its rounding error, under
    // (|x| + |y|)·2⁻²⁴ / |y|, is less than its distance 1/|y| to any other integer), so floor() stays exact
    // (chunks, dilation) although the quotient's own bounds are widened.
    double floor_lo = std::numeric_limits<double>::quiet_NaN(), floor_hi = floor_lo;

    // A whole constant below 2³⁰ is an integer in a kernel too (codegen's HalideBackend::constant).
    static interval point(double v) { return {v, v, v == std::floor(v) && std::abs(v) < 0x1p30}; }
    static interval range(double lo, double hi) { return {lo, hi, true}; }  // of integer indices
    static interval unbounded() { return {}; }
};

// What a predicate can be over a box.
struct truth {
    bool can_be_true = true;
    bool can_be_false = true;
};

// The placeholders' ranges: a block of pairs.
struct interval_env {
    interval score, b, h, q_idx, kv_idx;
};

namespace detail {

inline interval hull(double a, double b, double c, double d, bool integral) {
    const double lo = std::min({a, b, c, d}), hi = std::max({a, b, c, d});
    // A NaN among the candidates (0 · ∞) leaves that end unknown.
    if (std::isnan(a) || std::isnan(b) || std::isnan(c) || std::isnan(d)) return interval::unbounded();
    return {lo, hi, integral};
}

// A real operation's result, widened outward for float32 rounding unless it is exact integer arithmetic.
inline interval rounded(interval r) {
    if (std::isnan(r.lo)) r.lo = -std::numeric_limits<double>::infinity();
    if (std::isnan(r.hi)) r.hi = std::numeric_limits<double>::infinity();
    // Integers stay exact below 2²⁴ also where a kernel holds them in float32 (the result of a floor).
    if (r.integral && std::max(std::abs(r.lo), std::abs(r.hi)) < 0x1p24) return r;
    r.integral = false;
    constexpr double relative = 0x1p-16, absolute = 0x1p-40;
    r.lo -= std::abs(r.lo) * relative + absolute;
    r.hi += std::abs(r.hi) * relative + absolute;
    return r;
}

template <class F>
interval monotone(const interval& a, F f, bool increasing = true) {
    const double x = f(a.lo), y = f(a.hi);
    return rounded(increasing ? interval{x, y, false} : interval{y, x, false});
}

inline bool singleton(const interval& a) {
    return a.integral && a.lo == a.hi;
}

}  // namespace detail

struct interval_backend {
    interval constant(double v) const { return interval::point(v); }

    template <class In, class... I>
    interval read(In, const I&...) const {
        return interval::unbounded();
    }

    template <class Op, class... A>
    auto call(Op, const A&... a) const {
        namespace op = dsl::ex::op;
        using detail::rounded;
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

private:
    static truth logical_and(const truth& x, const truth& y) {
        return {x.can_be_true && y.can_be_true, x.can_be_false || y.can_be_false};
    }
    static truth logical_or(const truth& x, const truth& y) {
        return {x.can_be_true || y.can_be_true, x.can_be_false && y.can_be_false};
    }
    static truth logical_not(const truth& x) { return {x.can_be_false, x.can_be_true}; }

    static interval select(const truth& c, const interval& x, const interval& y) {
        if (!c.can_be_false) return x;
        if (!c.can_be_true) return y;
        return {std::min(x.lo, y.lo), std::max(x.hi, y.hi), x.integral && y.integral};
    }

    // x < y can be true unless x ≥ y everywhere (x.lo ≥ y.hi); it can be false unless x < y everywhere.
    template <class Op>
    static truth compare(Op, const interval& x, const interval& y) {
        namespace op = dsl::ex::op;
        if constexpr (std::is_same_v<Op, op::lt>)
            return {!(x.lo >= y.hi), !(x.hi < y.lo)};
        else if constexpr (std::is_same_v<Op, op::le>)
            return {!(x.lo > y.hi), !(x.hi <= y.lo)};
        else if constexpr (std::is_same_v<Op, op::gt>)
            return {!(y.lo >= x.hi), !(y.hi < x.lo)};
        else if constexpr (std::is_same_v<Op, op::ge>)
            return {!(y.lo > x.hi), !(y.hi <= x.lo)};
        else if constexpr (std::is_same_v<Op, op::eq>)
            return {!(x.hi < y.lo || y.hi < x.lo), !(detail::singleton(x) && detail::singleton(y) && x.lo == y.lo)};
        else
            return logical_not(compare(op::eq{}, x, y));
    }

    template <class Op>
    static interval arithmetic(Op, const interval& x) {
        namespace op = dsl::ex::op;
        if constexpr (std::is_same_v<Op, op::neg>) {
            return {-x.hi, -x.lo, x.integral};
        } else if constexpr (std::is_same_v<Op, op::abs>) {
            if (x.lo >= 0) return x;
            if (x.hi <= 0) return {-x.hi, -x.lo, x.integral};
            return {0, std::max(-x.lo, x.hi), x.integral};
        } else if constexpr (std::is_same_v<Op, op::floor>) {
            // floor is exact on what it is given; a widened operand is already outward.
            interval r{std::floor(x.lo), std::floor(x.hi), true};
            if (!std::isnan(x.floor_lo)) r = {x.floor_lo, x.floor_hi, true};
            return std::max(std::abs(r.lo), std::abs(r.hi)) < 0x1p24 ? r : interval{r.lo, r.hi, false};
        } else if constexpr (std::is_same_v<Op, op::tanh>) {
            return detail::monotone(x, [](double v) { return std::tanh(v); });
        } else if constexpr (std::is_same_v<Op, op::exp>) {
            return detail::monotone(x, [](double v) { return std::exp(v); });
        } else if constexpr (std::is_same_v<Op, op::exp2>) {
            return detail::monotone(x, [](double v) { return std::exp2(v); });
        } else {
            static_assert(std::is_same_v<Op, op::log>, "interval_backend: an operation without bounds");
            // log of a negative number is NaN: unknown there.
            if (!(x.lo > 0)) return interval::unbounded();
            return detail::monotone(x, [](double v) { return std::log(v); });
        }
    }

    template <class Op>
    static interval arithmetic(Op, const interval& x, const interval& y) {
        namespace op = dsl::ex::op;
        using detail::rounded;
        const bool integral = x.integral && y.integral;
        if constexpr (std::is_same_v<Op, op::add>) {
            return rounded({x.lo + y.lo, x.hi + y.hi, integral});
        } else if constexpr (std::is_same_v<Op, op::sub>) {
            return rounded({x.lo - y.hi, x.hi - y.lo, integral});
        } else if constexpr (std::is_same_v<Op, op::mul>) {
            return rounded(detail::hull(x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi, integral));
        } else if constexpr (std::is_same_v<Op, op::div>) {
            // Real division; a divisor that may be 0 leaves the quotient unknown.
            if (!(y.lo > 0 || y.hi < 0)) return interval::unbounded();
            const interval exact = detail::hull(x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi, false);
            interval r = rounded(exact);
            const double largest = std::max({std::abs(x.lo), std::abs(x.hi), std::abs(y.lo), std::abs(y.hi)});
            if (integral && largest < 0x1p22) {
                r.floor_lo = std::floor(exact.lo);
                r.floor_hi = std::floor(exact.hi);
            }
            return r;
        } else if constexpr (std::is_same_v<Op, op::min>) {
            return {std::min(x.lo, y.lo), std::min(x.hi, y.hi), integral};
        } else {
            static_assert(std::is_same_v<Op, op::max>, "interval_backend: an operation without bounds");
            return {std::max(x.lo, y.lo), std::max(x.hi, y.hi), integral};
        }
    }
};

// What a predicate can be over a block: dead (never holds), full (always holds) or partial.
enum class block_kind { dead, full, partial };

template <class Predicate>
truth truth_over(const Predicate& predicate, const interval_env& box) {
    static_assert(Predicate::type == value_type::boolean, "truth_over: a predicate (a boolean expression)");
    return evaluate(predicate, box, interval_backend{});
}

template <class Predicate>
block_kind classify_block(const Predicate& predicate, const interval_env& box) {
    const truth t = truth_over(predicate, box);
    return !t.can_be_true ? block_kind::dead : !t.can_be_false ? block_kind::full : block_kind::partial;
}

}  // namespace attnforge::dsl::ex
