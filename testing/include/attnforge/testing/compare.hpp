// Comparison helpers shared by the tests.
#pragma once

#include <attnforge/interp/score_rounding.hpp>
#include <attnforge/interp/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

namespace attnforge::testing {

// max |a - b| over all elements; +inf if shapes differ or a NaN appears on one side only.
inline double max_abs_diff(const interp::Tensor& a, const interp::Tensor& b) {
    if (a.shape != b.shape) return std::numeric_limits<double>::infinity();
    double m = 0;
    for (std::size_t i = 0; i < a.data.size(); ++i) {
        const double x = a.data[i], y = b.data[i];
        if (x == y) continue;  // also equal infinities
        if (std::isnan(x) != std::isnan(y) || std::isinf(x) || std::isinf(y))
            return std::numeric_limits<double>::infinity();
        m = std::max(m, std::abs(x - y));
    }
    return m;
}

inline double max_abs(const interp::Tensor& a) {
    double m = 0;
    for (double x : a.data) m = std::max(m, std::abs(x));
    return m;
}

// docs/contract.md §5: 1e-4 · (1 + max |reference|) plus the rounding of float32 scores
// (interp::Result::score_rounding, 0 where the reference has no attention).
// max |reference| over its finite values (a log-sum-exp is −∞ on fully masked rows). For bf16 and fp16
// storage the reference is the interpreter on the rounded inputs and the bound 5e-3 · (1 + max |reference|)
// (fp16: 2e-3 · (…)), which holds the rounding of the scores and of the stored result.
// docs/contract.md §5's term for a 16-bit kernel that rounds values it computes (projected Q, K, V):
// V·(e^(4·u·S) − 1) + 2·u·V, u = 2⁻⁸ (bf16) or 2⁻¹¹ (fp16), the largest over the graph's attentions, S and V
// as they enter the products (interp::ScoreRounding::attentions). V = 1 for attention weights and log-sum-exps
// (`values` false): a score moved by 2·u·S moves a weight by a factor of at most e^(4·u·S) − 1 of the sum.
inline double rounded_operands_term(const interp::ScoreRounding& rounding, std::string_view storage, bool values) {
    const double u = storage == "bf16" ? 0x1p-8 : storage == "fp16" ? 0x1p-11 : 0.0;
    double term = 0;
    for (const auto& a : rounding.attentions) {
        const double v = values ? a.value_magnitude : 1.0;
        term = std::max(term, v * std::expm1(4 * u * a.score_magnitude) + 2 * u * v);
    }
    return term;
}

inline double contract_bound(const interp::Tensor& reference, double score_rounding = 0,
                             std::string_view storage = "float32") {
    double m = 0;
    for (double x : reference.data)
        if (std::isfinite(x)) m = std::max(m, std::abs(x));
    if (storage == "bf16") return 5e-3 * (1 + m);
    if (storage == "fp16") return 2e-3 * (1 + m);
    return 1e-4 * (1 + m) + score_rounding;
}

}  // namespace attnforge::testing
