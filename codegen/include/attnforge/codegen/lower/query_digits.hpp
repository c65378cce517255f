// Queries as int8 digits, for a score product over 8-bit codes on integer dot products (x86's vpdpbusd: 64
// products of unsigned 8-bit codes by signed 8-bit values, summed by fours into 16 int32 lanes, in one instruction
// where the float32 product spends a widening load, a conversion, a subtraction and an FMA per 16 codes).
//
// Each (query, head) row of E float32 values gets a scale s = max|q| / 127 and three digits per element,
//   q ≈ q̃ = s · (d₀ + d₁/128 + d₂/128²),  d₀ ∈ [−127, 127], d₁, d₂ ∈ [−64, 64],
// each digit the rounded remainder of the one before: |q − q̃| ≤ s/2 · 128⁻² + |q|·2⁻²⁴ ≈ 2⁻²²·max|q|, four times
// float32's rounding of the largest element (two digits would leave 2⁻¹⁵·max|q|, which docs/contract.md §5's float32
// bound does not allow at E = 64). The products of codes and digits are exact in int32 (|Σ| ≤ E·255·127 < 2²³ at
// E = 256) and so in float32 after conversion; the digits' sums Σₑ dᵢ let the product subtract a zero point per key
// (Σ q̃·(u − z) = Σ q̃·u − z·Σ q̃) once per score. lower/decode_product.hpp uses them; docs/storage_types.md gives
// the accuracy.
#pragma once

#include <attnforge/codegen/lower/ieee.hpp>
#include <attnforge/codegen/lowering.hpp>

#include <functional>
#include <string>

namespace attnforge::codegen::detail {

inline constexpr int query_digit_count = 3;
inline constexpr float query_digit_base = 128.0f;

struct QueryDigits {
    Halide::Func max_abs;      // (q, h, b): max over e of |q|
    Halide::Func scale;        // (q, h, b): s, 1 for a row of zeros
    Halide::Func digits;       // (e, d, q, h, b) int8: dᵢ, d < query_digit_count
    Halide::Func digit_sums;   // (d, q, h, b) int32: Σₑ dᵢ
    Halide::Func row_sum;      // (q, h, b): Σₑ q̃ / s, i.e. Σ d₀ + Σ d₁/128 + Σ d₂/128²
};

// Digit d of t = value / scale, |t| ≤ 127: round(t), then the remainders' digits in base 128, clamped to the int8
// range (only d₀ can reach it). Computed with IEEE semantics (below).
inline Halide::Expr int8_digit(const Halide::Expr& t, const Halide::Expr& d) {
    const Halide::Expr d0 = Halide::round(t);
    const Halide::Expr r1 = (t - d0) * query_digit_base;
    const Halide::Expr d1 = Halide::round(r1);
    const Halide::Expr d2 = Halide::round((r1 - d1) * query_digit_base);
    const Halide::Expr digit = ieee(Halide::select(d == 0, d0, d == 1, d1, d2));
    return Halide::cast<int8_t>(Halide::clamp(digit, -127.0f, 127.0f));
}

// The value the digits stand for, in units of the scale: d₀ + d₁/128 + d₂/128² (float32).
inline Halide::Expr digits_value(const std::function<Halide::Expr(int)>& digit) {
    return Halide::cast<float>(digit(0)) + Halide::cast<float>(digit(1)) * (1.0f / query_digit_base) +
           Halide::cast<float>(digit(2)) * (1.0f / (query_digit_base * query_digit_base));
}

// The digits of `query` (e, q, h, b), E values a row. The remainders are computed with IEEE semantics (ieee.hpp):
// under fast-math LLVM may reassociate t − round(t), whose exactness the digits rely on.
inline QueryDigits query_digits(const Halide::Func& query, int head_width, const std::string& name) {
    using Halide::Expr;
    Halide::Var e("e"), d("d"), q("q"), h("h"), b("b");
    QueryDigits out{Halide::Func(name + "_query_max"), Halide::Func(name + "_query_scale"),
                    Halide::Func(name + "_query_digits"), Halide::Func(name + "_query_digit_sums"),
                    Halide::Func(name + "_query_row_sum")};
    Halide::RDom re(0, head_width, "re");
    out.max_abs(q, h, b) = 0.0f;
    out.max_abs(q, h, b) = Halide::max(out.max_abs(q, h, b), Halide::abs(query(re, q, h, b)));
    const Expr largest = out.max_abs(q, h, b);
    out.scale(q, h, b) = ieee(Halide::select(largest == 0.0f, 1.0f, largest / 127.0f));
    out.digits(e, d, q, h, b) = int8_digit(query(e, q, h, b) / out.scale(q, h, b), d);
    out.digit_sums(d, q, h, b) = 0;
    out.digit_sums(d, q, h, b) += Halide::cast<int32_t>(out.digits(re, d, q, h, b));
    out.row_sum(q, h, b) = digits_value([&](int i) { return out.digit_sums(i, q, h, b); });
    return out;
}

}  // namespace attnforge::codegen::detail
