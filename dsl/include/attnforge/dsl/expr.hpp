// Index and score expressions: what predicate masks and score modifiers are written in.
//
// A user writes a generic lambda, as in FlexAttention:
//     predicate([](auto b, auto h, auto q_idx, auto kv_idx) { return q_idx - kv_idx <= 128; })
//     modify(s, [](auto score, auto b, auto h, auto q_idx, auto kv_idx) { return score - h * 0.5; })
// The DSL calls it once with symbolic placeholders, so the lambda's body is captured as an expression
// tree (capture). Evaluators walk that tree with a Backend (evaluate): the reference interpreter with
// doubles, the Halide lowering with Halide::Expr. Semantics are those of real numbers: indices are
// integers, `/` is real division, comparisons and &&, ||, ! give booleans, select(c, a, b) picks.
//
// Like FlexAttention's closures over tensors, an expression may read a graph input at index
// expressions: `doc_ids(b, q_idx) == doc_ids(b, kv_idx)`, `bias(h, clamp(kv_idx - q_idx, ...))`
// (input_node::operator(), nodes/input.hpp). Indices run in row-major order, batch first; each is
// rounded down and clamped to the input's extent, so every read is defined (and kernels may round tiles
// up). The input becomes an input of the graph.
#pragma once

#include <attnforge/dsl/fixed_string.hpp>

#include <boost/hana/any_of.hpp>
#include <boost/hana/append.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include <cstdio>
#include <string>
#include <type_traits>

namespace attnforge::dsl::ex {

namespace hana = boost::hana;

enum class value_type { real, boolean };
enum class var_id { score, b, h, q_idx, kv_idx };

template <var_id V>
struct var {
    static constexpr value_type type = value_type::real;
    static constexpr var_id id = V;
};

struct constant {
    double value;
    static constexpr value_type type = value_type::real;
};

template <class Input, class... Index>
struct read {
    hana::tuple<Index...> index;
    static constexpr value_type type = value_type::real;
};

template <class Op, class... Args>
struct apply {
    hana::tuple<Args...> args;
    static constexpr value_type type = Op::result;
};

// ---- the operations ------------------------------------------------------------------------------
// operands: the value type every operand must have; result: the value type produced.
namespace op {
#define ATTNFORGE_EX_OP(NAME, SPELLING, OPERANDS, RESULT)                     \
    struct NAME {                                                             \
        static constexpr const char* spelling = SPELLING;                     \
        static constexpr bool infix = SPELLING[0] < 'a' || SPELLING[0] > 'z'; \
        static constexpr value_type operands = value_type::OPERANDS;          \
        static constexpr value_type result = value_type::RESULT;              \
    };
ATTNFORGE_EX_OP(add, "+", real, real)
ATTNFORGE_EX_OP(sub, "-", real, real)
ATTNFORGE_EX_OP(mul, "*", real, real)
ATTNFORGE_EX_OP(div, "/", real, real)
ATTNFORGE_EX_OP(neg, "neg", real, real)
ATTNFORGE_EX_OP(lt, "<", real, boolean)
ATTNFORGE_EX_OP(le, "<=", real, boolean)
ATTNFORGE_EX_OP(gt, ">", real, boolean)
ATTNFORGE_EX_OP(ge, ">=", real, boolean)
ATTNFORGE_EX_OP(eq, "==", real, boolean)
ATTNFORGE_EX_OP(ne, "!=", real, boolean)
ATTNFORGE_EX_OP(logical_and, "&&", boolean, boolean)
ATTNFORGE_EX_OP(logical_or, "||", boolean, boolean)
ATTNFORGE_EX_OP(logical_not, "!", boolean, boolean)
ATTNFORGE_EX_OP(abs, "abs", real, real)
ATTNFORGE_EX_OP(min, "min", real, real)
ATTNFORGE_EX_OP(max, "max", real, real)
ATTNFORGE_EX_OP(tanh, "tanh", real, real)
ATTNFORGE_EX_OP(exp, "exp", real, real)
ATTNFORGE_EX_OP(exp2, "exp2", real, real)
ATTNFORGE_EX_OP(log, "log", real, real)
ATTNFORGE_EX_OP(floor, "floor", real, real)
#undef ATTNFORGE_EX_OP
// select(condition, if_true, if_false): the condition is boolean, the branches real.
struct select {
    static constexpr const char* spelling = "select";
    static constexpr bool infix = false;
    static constexpr value_type result = value_type::real;
};
}  // namespace op

// ---- capture ------------------------------------------------------------------------------------
template <class T>
struct is_expr : std::false_type {};
template <var_id V>
struct is_expr<var<V>> : std::true_type {};
template <>
struct is_expr<constant> : std::true_type {};
template <class Op, class... A>
struct is_expr<apply<Op, A...>> : std::true_type {};
template <class In, class... I>
struct is_expr<read<In, I...>> : std::true_type {};

template <class T>
concept expression = is_expr<std::remove_cvref_t<T>>::value;
template <class T>
concept operand = expression<T> || std::is_arithmetic_v<std::remove_cvref_t<T>>;

template <class T>
constexpr auto as_expr(const T& v) {
    if constexpr (expression<T>)
        return v;
    else
        return constant{static_cast<double>(v)};
}

// Type rule of one operation, checked while the lambda is captured. Returns false instead of failing,
// so the node that owns the expression reports it once (diagnostic::expression_rule).
template <class Op, class... Args>
constexpr bool well_typed() {
    if constexpr (std::is_same_v<Op, op::select>) {
        constexpr value_type t[] = {Args::type...};
        return t[0] == value_type::boolean && t[1] == value_type::real && t[2] == value_type::real;
    } else {
        return ((Args::type == Op::operands) && ...);
    }
}

template <class Op, class... Args>
constexpr auto make(const Args&... args) {
    return apply<Op, std::remove_cvref_t<decltype(as_expr(args))>...>{hana::make_tuple(as_expr(args)...)};
}

#define ATTNFORGE_EX_BINARY(SYM, OP)                                                               \
    template <operand L, operand R>                                                                \
    requires(expression<L> || expression<R>) constexpr auto operator SYM(const L& l, const R& r) { \
        return make<op::OP>(l, r);                                                                 \
    }
ATTNFORGE_EX_BINARY(+, add)
ATTNFORGE_EX_BINARY(-, sub)
ATTNFORGE_EX_BINARY(*, mul)
ATTNFORGE_EX_BINARY(/, div)
ATTNFORGE_EX_BINARY(<, lt)
ATTNFORGE_EX_BINARY(<=, le)
ATTNFORGE_EX_BINARY(>, gt)
ATTNFORGE_EX_BINARY(>=, ge)
ATTNFORGE_EX_BINARY(==, eq)
ATTNFORGE_EX_BINARY(!=, ne)
ATTNFORGE_EX_BINARY(&&, logical_and)
ATTNFORGE_EX_BINARY(||, logical_or)
#undef ATTNFORGE_EX_BINARY
template <expression E>
constexpr auto operator-(const E& e) {
    return make<op::neg>(e);
}
template <expression E>
constexpr auto operator!(const E& e) {
    return make<op::logical_not>(e);
}

template <operand E>
constexpr auto abs(const E& e) {
    return make<op::abs>(e);
}
template <operand E>
constexpr auto tanh(const E& e) {
    return make<op::tanh>(e);
}
template <operand E>
constexpr auto exp(const E& e) {
    return make<op::exp>(e);
}
template <operand E>
constexpr auto exp2(const E& e) {
    return make<op::exp2>(e);
}
template <operand E>
constexpr auto log(const E& e) {
    return make<op::log>(e);
}
template <operand E>
constexpr auto floor(const E& e) {
    return make<op::floor>(e);
}
template <operand L, operand R>
constexpr auto min(const L& l, const R& r) {
    return make<op::min>(l, r);
}
template <operand L, operand R>
constexpr auto max(const L& l, const R& r) {
    return make<op::max>(l, r);
}
template <operand C, operand T, operand F>
constexpr auto select(const C& c, const T& t, const F& f) {
    return make<op::select>(c, t, f);
}

// ---- compile-time questions about a captured expression ------------------------------------------
// reads_at_points: some read's indices are of b and h alone (prefix_length(b), a window per head): over a
// block of pairs of one head and batch entry the read is one value, which bounds can use where it is known
// (inside a kernel; dsl/passes/expr_intervals.hpp).
template <class E>
struct checks {
    static constexpr bool typed = true;
    template <var_id V>
    static constexpr bool uses = false;
    static constexpr bool reads_at_points = false;
};
template <class E>
struct checks<const E> : checks<E> {};
template <var_id W>
struct checks<var<W>> {
    static constexpr bool typed = true;
    template <var_id V>
    static constexpr bool uses = V == W;
    static constexpr bool reads_at_points = false;
};
template <class Op, class... A>
struct checks<apply<Op, A...>> {
    static constexpr bool typed = well_typed<Op, A...>() && (checks<A>::typed && ...);
    template <var_id V>
    static constexpr bool uses = (checks<A>::template uses<V> || ...);
    static constexpr bool reads_at_points = (checks<A>::reads_at_points || ...);
};
template <class In, class... I>
struct checks<read<In, I...>> {
    static constexpr bool typed = ((I::type == value_type::real && checks<I>::typed) && ...);
    template <var_id V>
    static constexpr bool uses = (checks<I>::template uses<V> || ...);
    static constexpr bool reads_at_points =
        !(uses<var_id::score> || uses<var_id::q_idx> || uses<var_id::kv_idx>) || (checks<I>::reads_at_points || ...);
};

// The graph inputs an expression reads, as a hana::tuple of input nodes, repeats included
// (inputs_read keeps the first of each name).
template <class E>
constexpr auto inputs_of(const E&) {
    return hana::make_tuple();
}
template <class In, class... I>
constexpr auto inputs_of(const read<In, I...>& e) {
    return hana::unpack(e.index, [](const auto&... i) {
        return hana::flatten(hana::make_tuple(hana::make_tuple(In{}), inputs_of(i)...));
    });
}
template <class Op, class... A>
constexpr auto inputs_of(const apply<Op, A...>& e) {
    return hana::unpack(e.args, [](const auto&... a) { return hana::flatten(hana::make_tuple(inputs_of(a)...)); });
}

// ---- evaluate -------------------------------------------------------------------------------------
// Env: the values of the placeholders, in the Backend's value type. Backend: a type with
//   constant(double) -> value       and       call(Op{}, values...) -> value
template <class Backend, class Env, var_id V>
auto evaluate(const var<V>&, const Env& env, const Backend&) {
    if constexpr (V == var_id::score)
        return env.score;
    else if constexpr (V == var_id::b)
        return env.b;
    else if constexpr (V == var_id::h)
        return env.h;
    else if constexpr (V == var_id::q_idx)
        return env.q_idx;
    else
        return env.kv_idx;
}
template <class Backend, class Env>
auto evaluate(const constant& c, const Env&, const Backend& backend) {
    return backend.constant(c.value);
}
template <class Backend, class Env, class Op, class... A>
auto evaluate(const apply<Op, A...>& e, const Env& env, const Backend& backend) {
    return hana::unpack(e.args,
                        [&](const auto&... args) { return backend.call(Op{}, evaluate(args, env, backend)...); });
}

template <class E>
constexpr auto inputs_read(const E& e) {
    return hana::fold_left(inputs_of(e), hana::make_tuple(), [](auto seen, auto in) {
        constexpr bool repeat = decltype(hana::any_of(
            seen, [](auto s) { return hana::bool_c<decltype(s)::name == decltype(in)::name>; }))::value;
        if constexpr (repeat)
            return seen;
        else
            return hana::append(seen, in);
    });
}

// A read: Backend::read(Input{}, index values...) gives the input's value there. The indices are
// evaluated with backend.indices() where the backend has one (a wider real type for index arithmetic).
template <class Backend, class Env, class In, class... I>
auto evaluate(const read<In, I...>& e, const Env& env, const Backend& backend) {
    const auto index_backend = [&] {
        if constexpr (requires { backend.indices(); })
            return backend.indices();
        else
            return backend;
    }();
    return hana::unpack(e.index,
                        [&](const auto&... i) { return backend.read(In{}, evaluate(i, env, index_backend)...); });
}

// ---- canonical text ------------------------------------------------------------------------------
template <var_id V>
std::string to_string(const var<V>&) {
    constexpr const char* names[] = {"score", "b", "h", "q_idx", "kv_idx"};
    return names[static_cast<int>(V)];
}
inline std::string to_string(const constant& c) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", c.value);
    return buf;
}
template <class Op, class... A>
std::string to_string(const apply<Op, A...>& e) {
    if constexpr (sizeof...(A) == 2 && Op::infix) {
        return "(" + to_string(hana::at_c<0>(e.args)) + " " + Op::spelling + " " + to_string(hana::at_c<1>(e.args)) +
               ")";
    } else {
        std::string s = std::string(Op::spelling) + "(";
        hana::unpack(e.args, [&](const auto&... args) {
            const char* sep = "";
            ((s += sep, s += to_string(args), sep = ", "), ...);
        });
        return s + ")";
    }
}

template <class In, class... I>
std::string to_string(const read<In, I...>& e) {
    std::string s = std::string(In::name.view()) + "[";
    hana::unpack(e.index, [&](const auto&... i) {
        const char* sep = "";
        ((s += sep, s += to_string(i), sep = ", "), ...);
    });
    return s + "]";
}

// The placeholders a captured lambda is called with.
inline constexpr var<var_id::score> score_placeholder{};
inline constexpr var<var_id::b> b_placeholder{};
inline constexpr var<var_id::h> h_placeholder{};
inline constexpr var<var_id::q_idx> q_idx_placeholder{};
inline constexpr var<var_id::kv_idx> kv_idx_placeholder{};

}  // namespace attnforge::dsl::ex
