// Comparison helpers shared by the tests.
#pragma once

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
