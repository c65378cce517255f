// Runs the project's generated kernels through the attnforge runtime API and checks them against
// attnforge's reference interpreter through the engine (docs/contract.md §5's bound); exit status 1
// if any is off, if a value is NaN, or if the project's list made no kernel for a result.
#include "my_variants.hpp"
#include <attnforge/runtime/engine.hpp>

#include <cmath>
#include <cstdio>
#include <random>

namespace rt = attnforge::runtime;

int main() {
    bool ok = true;
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (std::int64_t L : {7, 200, 1000}) {
        // q, k, v of shape (B = 2, H = 4, L, E = 32), uniform in [-1, 1].
        rt::TensorMap inputs;
        for (const char* name : {"q", "k", "v"}) {
            rt::Tensor t = rt::Tensor::float32({2, 4, L, 32});
            for (float& x : t.f32) x = unit(gen);
            inputs.emplace(name, std::move(t));
        }
        for (std::string_view result : {"output", "attention_weights"}) {
            const attnforge::interp::Tensor expected = rt::interpret("windowed_alibi", inputs, result);
            double scale = 0;
            for (double x : expected.data) scale = std::max(scale, std::abs(x));
            const auto kernels = rt::kernels_for("windowed_alibi", result);
            if (kernels.empty()) {
                std::printf("  no %s kernel of windowed_alibi in the registry\n", std::string(result).c_str());
                return 1;
            }
            for (const rt::KernelEntry* k : kernels) {
                double worst = 0;
                const rt::Tensor got = rt::run_kernel(*k, inputs);
                if (got.f32.size() != expected.data.size()) {
                    std::printf("  %s: %zu values, the interpreter gives %zu\n", std::string(k->name).c_str(),
                                got.f32.size(), expected.data.size());
                    return 1;
                }
                // A NaN anywhere is a failure (std::max would drop it): it makes `worst` NaN, never <= bound.
                for (std::size_t i = 0; i < expected.data.size(); ++i) {
                    const double d = std::abs(double(got.f32[i]) - expected.data[i]);
                    if (!(d <= worst)) worst = d;
                }
                const double bound = 1e-4 * (1 + scale);
                std::printf("  %-40s L = %4lld  max |kernel - interpreter| %.2e (bound %.2e)\n",
                            std::string(k->name).c_str(), static_cast<long long>(L), worst, bound);
                ok = ok && worst <= bound;
            }
        }
    }
    std::printf("downstream: %s\n", ok ? "every kernel matches the interpreter" : "MISMATCH");
    return ok ? 0 : 1;
}
