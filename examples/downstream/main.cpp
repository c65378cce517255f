// Runs the project's generated kernels through the attnforge runtime API and checks them against
// attnforge's reference interpreter (docs/contract.md §5's bound); exit status 1 if any is off.
#include "my_variants.hpp"
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/runtime/synthetic_inputs.hpp>

#include <cmath>
#include <cstdio>

namespace rt = attnforge::runtime;

int main() {
    bool ok = true;
    const auto sig = attnforge::dsl::signature(my_project::variants::windowed_alibi);
    for (std::int64_t L : {7, 200, 1000}) {
        const auto inputs = rt::synthetic_inputs(sig, {2, 4, {{"q", L}, {"kv", L}}}, {});
        const auto reference =
            attnforge::interp::evaluate(my_project::variants::windowed_alibi, rt::to_float64(inputs));
        for (std::string_view result : {"output", "attention_weights"}) {
            const auto& expected =
                result == "output" ? reference.output : reference.intermediates.at("attention_weights");
            double scale = 0;
            for (double x : expected.data) scale = std::max(scale, std::abs(x));
            for (const rt::KernelEntry* k : rt::kernels_for("windowed_alibi", result)) {
                double worst = 0;
                const rt::Tensor got = rt::run_kernel(*k, inputs);
                if (got.f32.size() != expected.data.size()) {
                    std::printf("  %s: %zu values, the interpreter gives %zu\n", std::string(k->name).c_str(),
                                got.f32.size(), expected.data.size());
                    return 1;
                }
                for (std::size_t i = 0; i < expected.data.size(); ++i)
                    worst = std::max(worst, std::abs(double(got.f32[i]) - expected.data[i]));
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
