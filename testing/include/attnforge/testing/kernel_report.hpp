// What every kernel example prints (link attnforge::engine): the generated kernel (the one the rule picks) against the
// reference interpreter on the same inputs — max |error| and docs/contract.md §5's bound — and the kernel's time.
#pragma once

#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/reference.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace attnforge::testing {

namespace rt = attnforge::runtime;

// Runs `variant` on `inputs` with its kernel and with the interpreter; prints one report line and
// returns the kernel's output (result: output or attention_weights). `ok` turns false past the bound.
inline rt::Tensor kernel_vs_interpreter(const std::string& variant, const rt::TensorMap& inputs, bool& ok,
                                        std::string_view result = "output") {
    const rt::KernelEntry& kernel = rt::select_kernel(variant, inputs, result);
    const rt::Tensor out = rt::run_kernel(kernel, inputs);
    const auto reference = rt::interpret(variant, inputs, result);
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < reference.data.size(); ++i) {
        scale = std::max(scale, std::abs(reference.data[i]));
        const double e = std::abs(double(out.f32[i]) - reference.data[i]);
        worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
    const double bound = 1e-4 * (1 + scale);
    std::vector<double> ms;
    rt::Tensor again = out;
    for (int i = 0; i < 7; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        rt::run_kernel_into(kernel, inputs, again);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("  %-44s max |kernel - interpreter| %.2e (bound %.2e)  %8.3f ms (median of 7)\n",
                std::string(kernel.name).c_str(), worst, bound, ms[3]);
    ok = ok && worst <= bound;
    return out;
}

// Whether two kernel outputs of a property check agree: max |a − b| ≤ 1e-5 · (1 + max |a|) (a NaN
// anywhere disagrees); prints one line naming the property and the largest difference.
inline bool same_outputs(const rt::Tensor& a, const rt::Tensor& b, const char* property) {
    double worst = a.f32.size() == b.f32.size() ? 0.0 : INFINITY, scale = 0;
    for (std::size_t i = 0; i < a.f32.size() && i < b.f32.size(); ++i) {
        scale = std::max(scale, double(std::abs(a.f32[i])));
        const double d = std::abs(double(a.f32[i]) - b.f32[i]);
        if (!(d <= worst)) worst = d;  // NaN included
    }
    const bool same = worst <= 1e-5 * (1 + scale);
    std::printf("  %s: max |difference| %.2e (%s)\n", property, worst, same ? "holds" : "BROKEN");
    return same;
}

// A (B, L, D) tensor with the L tokens of each batch entry in reverse order.
inline void reverse_tokens(rt::Tensor& t) {
    const std::int64_t B = t.shape[0], L = t.shape[1], D = t.shape[2];
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t l = 0; l < L / 2; ++l)
            std::swap_ranges(t.f32.begin() + (b * L + l) * D, t.f32.begin() + (b * L + l + 1) * D,
                             t.f32.begin() + (b * L + L - 1 - l) * D);
}

// Deterministic inputs for a variant's signature at these sizes (synthetic_inputs.hpp).
inline rt::TensorMap inputs_for(const std::string& variant, SyntheticSizes sizes) {
    const auto candidates = rt::kernels_for(variant, "output");
    return synthetic_inputs(candidates.front()->signature(), sizes, {});
}

}  // namespace attnforge::testing
