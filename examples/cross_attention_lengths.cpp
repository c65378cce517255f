// Cross-attention between different lengths: 7 decoder queries attend to 13 encoder memory tokens
// (seed 001 §7's encoder-decoder attention), then 300 queries to 1000 memory tokens.
// Property checked: with no mask and no positions, the memory is a set — reversing the order of its
// tokens leaves every output row unchanged (the softmax sums over keys in any order).
#include <attnforge/testing/kernel_report.hpp>

#include <algorithm>

namespace rt = attnforge::runtime;

int main() {
    bool ok = true;
    std::printf("cross_attention: queries from x, keys and values from memory\n");
    attnforge::testing::kernel_vs_interpreter(
        "cross_attention", attnforge::testing::inputs_for("cross_attention", {1, 8, {{"x", 7}, {"memory", 13}}}), ok);
    auto inputs = attnforge::testing::inputs_for("cross_attention", {2, 8, {{"x", 300}, {"memory", 1000}}});
    const rt::Tensor out = attnforge::testing::kernel_vs_interpreter("cross_attention", inputs, ok);

    // memory (B, Lk, 512): the tokens of each batch entry in reverse order.
    rt::Tensor& memory = inputs.at("memory");
    const std::int64_t Lk = memory.shape[1], D = memory.shape[2];
    for (std::int64_t b = 0; b < memory.shape[0]; ++b)
        for (std::int64_t j = 0; j < Lk / 2; ++j)
            std::swap_ranges(memory.f32.begin() + (b * Lk + j) * D, memory.f32.begin() + (b * Lk + j + 1) * D,
                             memory.f32.begin() + (b * Lk + Lk - 1 - j) * D);
    const bool same = attnforge::testing::same_outputs(out, rt::run("cross_attention", inputs),
                                                       "memory reversed, the output unchanged");
    return ok && same ? 0 : 1;
}
