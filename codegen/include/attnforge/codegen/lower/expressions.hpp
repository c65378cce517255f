// The Halide backend of DSL expressions (predicates and score modifiers): evaluates a captured
// expression tree into a Halide::Expr. Indices stay 32-bit integers while only integers meet, so
// that masks compare integers exactly; any real operand turns the operation into float32; `/` is
// always real division, as in the interpreter.
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lower/vector_math.hpp>
#include <attnforge/codegen/lowering.hpp>
#include <attnforge/dsl/expr.hpp>

#include <Halide.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace attnforge::codegen {

// An input at row-major indices `given` (batch first): each rounded down and clamped to its axis before it
// becomes an integer, as in the interpreter (±inf clamp to the ends, NaN reads index 0, in both). Index inputs
// (int32) stay integers, so that ids and lengths compare exactly; masks (uint8) become float32 0 or 1.
// from_buffer: read the input's buffer itself where it has one (a reduction's condition that reads only
// inputs is lifted out of its loops by Halide; one that calls a Func is not).
inline Halide::Expr read_input(const Lowered& in, const std::vector<Halide::Expr>& given, bool from_buffer) {
    const int n = static_cast<int>(given.size());
    std::vector<Halide::Expr> args;  // innermost first
    for (int r = n - 1; r >= 0; --r) {
        Halide::Expr i = given[static_cast<std::size_t>(r)];
        const Halide::Expr last = in.extents[static_cast<std::size_t>(n - 1 - r)] - 1;
        if (i.type().is_float()) {
            const Halide::Type t = i.type();
            const Halide::Expr f = Halide::floor(i);
            i = Halide::cast<int>(ieee(Halide::select(Halide::is_nan(f), Halide::cast(t, 0),
                                                      Halide::clamp(f, Halide::cast(t, 0), Halide::cast(t, last)))));
        }
        args.push_back(Halide::clamp(i, 0, last));
    }
    Halide::Expr v;
    if (from_buffer && in.buffer) {
        v = in.buffer(args);  // the buffer's own axes: those the read gives
    } else {
        while (args.size() < in.extents.size()) args.push_back(0);  // an unbatched input's batch index
        v = in.func(args);
    }
    return v.type().is_float() || v.type() == Halide::Int(32) ? v : Halide::cast<float>(v);
}

struct HalideBackend {
    const LoweredInputs* inputs;  // what reads (ex::read) read
    Halide::Type real_type = Halide::Float(32);                 // of real arithmetic; float64 inside a read's indices

    // The backend a read's index expressions are evaluated with: real arithmetic in float64, as the
    // interpreter's, so that flooring a fractional index (q_idx * 0.7) picks the same element.
    HalideBackend indices() const {
        HalideBackend b = *this;
        b.real_type = Halide::Float(64);
        return b;
    }

    // An input at row-major indices (read_input), through its Func.
    template <class In, class... V>
    Halide::Expr read(In, V... index) const {
        return read_input(inputs->find(In::name.view())->second, {index...}, false);
    }

    Halide::Expr constant(double v) const {
        if (v == std::floor(v) && std::abs(v) < 1 << 30) return Halide::Expr(static_cast<int>(v));
        return Halide::Internal::make_const(real_type, v);
    }

    template <class Op, class... A>
    Halide::Expr call(Op, A... a) const {
        namespace op = dsl::ex::op;
        using Halide::Expr;
        const Expr x[] = {a...};
        auto real = [&](const Expr& e) { return e.type() == real_type ? e : Halide::cast(real_type, e); };
        // Binary arithmetic: integers if both are integers, else float32.
        auto both = [&](auto f) {
            if (x[0].type().is_int() && x[1].type().is_int()) return f(x[0], x[1]);
            return f(real(x[0]), real(x[1]));
        };
        if constexpr (std::is_same_v<Op, op::add>)
            return both([](Expr l, Expr r) { return l + r; });
        else if constexpr (std::is_same_v<Op, op::sub>)
            return both([](Expr l, Expr r) { return l - r; });
        else if constexpr (std::is_same_v<Op, op::mul>)
            return both([](Expr l, Expr r) { return l * r; });
        else if constexpr (std::is_same_v<Op, op::div>)
            return real(x[0]) / real(x[1]);
        else if constexpr (std::is_same_v<Op, op::neg>)
            return -x[0];
        else if constexpr (std::is_same_v<Op, op::lt>)
            return both([](Expr l, Expr r) { return l < r; });
        else if constexpr (std::is_same_v<Op, op::le>)
            return both([](Expr l, Expr r) { return l <= r; });
        else if constexpr (std::is_same_v<Op, op::gt>)
            return both([](Expr l, Expr r) { return l > r; });
        else if constexpr (std::is_same_v<Op, op::ge>)
            return both([](Expr l, Expr r) { return l >= r; });
        else if constexpr (std::is_same_v<Op, op::eq>)
            return both([](Expr l, Expr r) { return l == r; });
        else if constexpr (std::is_same_v<Op, op::ne>)
            return both([](Expr l, Expr r) { return l != r; });
        else if constexpr (std::is_same_v<Op, op::logical_and>)
            return x[0] && x[1];
        else if constexpr (std::is_same_v<Op, op::logical_or>)
            return x[0] || x[1];
        else if constexpr (std::is_same_v<Op, op::logical_not>)
            return !x[0];
        else if constexpr (std::is_same_v<Op, op::abs>)
            return x[0].type().is_int() ? Halide::cast<int>(Halide::abs(x[0])) : Halide::abs(x[0]);
        else if constexpr (std::is_same_v<Op, op::min>)
            return both([](Expr l, Expr r) { return Halide::min(l, r); });
        else if constexpr (std::is_same_v<Op, op::max>)
            return both([](Expr l, Expr r) { return Halide::max(l, r); });
        else if constexpr (std::is_same_v<Op, op::tanh>)
            return vector_tanh(real(x[0]));  // Halide::tanh would call tanhf per lane
        else if constexpr (std::is_same_v<Op, op::exp>)
            return vector_exp(real(x[0]));
        else if constexpr (std::is_same_v<Op, op::exp2>)
            return vector_exp2(real(x[0]));
        else if constexpr (std::is_same_v<Op, op::log>)
            return vector_log(real(x[0]));
        else if constexpr (std::is_same_v<Op, op::floor>)
            return Halide::floor(real(x[0]));
        else if constexpr (std::is_same_v<Op, op::select>)
            return Halide::select(x[0], real(x[1]), real(x[2]));
        else
            static_assert(sizeof(Op) == 0, "HalideBackend: an expression operation has no lowering here");
    }
};

// The placeholders, as Halide values.
struct HalideEnv {
    Halide::Expr score, b, h, q_idx, kv_idx;
};

}  // namespace attnforge::codegen
