// The NaN probe of which key blocks a kernel visits (tests/kernels/test_block_skipping.cpp,
// test_user_variants.cpp). Kernels multiply a masked key's value by an exact 0 (docs/robustness.md), so
// a NaN in V at a masked key reaches every row of that head whose kernel visits the key's block: NaN values
// at keys dead for some rows must leave those rows finite and as they were.
#pragma once

#include <attnforge/runtime/run.hpp>
#include <attnforge/testing/kernels_at.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace nan_probe {

namespace runtime = attnforge::runtime;
using Sizes = attnforge::testing::SyntheticSizes;

constexpr std::int64_t L = 1024;
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

// Calls f(i) for the index i of every element of t whose index along `axis` is in [first, last).
inline void for_slice(const runtime::Tensor& t, int axis, std::int64_t first, std::int64_t last,
               const std::function<void(std::size_t)>& f) {
    std::int64_t outer = 1, inner = 1;
    for (int a = 0; a < axis; ++a) outer *= t.shape[static_cast<std::size_t>(a)];
    for (std::size_t a = static_cast<std::size_t>(axis) + 1; a < t.shape.size(); ++a) inner *= t.shape[a];
    const std::int64_t n = t.shape[static_cast<std::size_t>(axis)];
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t r = first; r < last; ++r)
            for (std::int64_t i = 0; i < inner; ++i) f(static_cast<std::size_t>((o * n + r) * inner + i));
}

// Rows [first, last) of an output whose row index is axis `row_axis`: every element of them.
inline std::vector<float> rows_of(const runtime::Tensor& out, int row_axis, std::int64_t first, std::int64_t last) {
    std::vector<float> v;
    for_slice(out, row_axis, first, last, [&](std::size_t i) { v.push_back(out.f32[i]); });
    return v;
}

// Sets tensor t (..., L, width) to NaN at positions [first, last) of its sequence axis `axis`.
inline void poison(runtime::Tensor& t, int axis, std::int64_t first, std::int64_t last) {
    for_slice(t, axis, first, last, [&](std::size_t i) { t.f32[i] = nan_value; });
}

struct Probe {
    std::string variant;
    Sizes sizes;
    std::function<void(runtime::TensorMap&)> set_indices;  // document ids, prefix lengths, padding
    std::string poisoned;                                  // the input made NaN at the dead keys
    int poisoned_axis;                                     // its sequence axis
    std::int64_t dead_first, dead_last;                    // the dead keys
    int row_axis;                                          // the output's query axis
    std::int64_t rows_first, rows_last;                    // the rows they are dead for
};

// Whether kernel k, with the dead keys' values NaN, leaves the rows finite and as they were.
inline bool skips(const runtime::KernelEntry& k, const Probe& p) {
    runtime::TensorMap inputs = attnforge::testing::synthetic_inputs(k.signature(), p.sizes, {});
    if (p.set_indices) p.set_indices(inputs);
    const std::vector<float> clean = rows_of(runtime::run_kernel(k, inputs), p.row_axis, p.rows_first, p.rows_last);
    poison(inputs.at(p.poisoned), p.poisoned_axis, p.dead_first, p.dead_last);
    const std::vector<float> probed = rows_of(runtime::run_kernel(k, inputs), p.row_axis, p.rows_first, p.rows_last);
    bool same = clean.size() == probed.size();
    for (std::size_t i = 0; same && i < clean.size(); ++i) same = std::isfinite(probed[i]) && probed[i] == clean[i];
    return same;
}

// Every output kernel of the probe's variant whose strategy is in `strategies` must skip.
inline void every_kernel_skips(const Probe& p, const std::vector<std::string>& strategies) {
    int checked = 0;
    for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(p.variant, "output")) {
        if (std::find(strategies.begin(), strategies.end(), std::string(k->strategy)) == strategies.end()) continue;
        ++checked;
        BOOST_TEST(skips(*k, p), k->name << ": rows [" << p.rows_first << ", " << p.rows_last << ") changed with NaN "
                                           << p.poisoned << " at keys [" << p.dead_first << ", " << p.dead_last
                                           << "), dead for them: their blocks were visited");
    }
    BOOST_TEST(checked >= 1, p.variant << ": no kernel of " << strategies.size() << " strategies to probe");
}

}  // namespace nan_probe
