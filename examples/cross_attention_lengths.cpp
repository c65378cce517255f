// Cross-attention between different lengths: 7 decoder queries attend to 13 encoder memory tokens
// (seed 001 §7's encoder-decoder attention), then 300 queries to 1000 memory tokens.
// Property checked: with no mask and no positions, the memory is a set — reversing the order of its
// tokens leaves every output row unchanged (the softmax sums over keys in any order).
#include <attnforge/testing/kernel_report.hpp>

namespace rt = attnforge::runtime;

int main() {
    bool ok = true;
    std::printf("cross_attention: queries from x, keys and values from memory\n");
    attnforge::testing::kernel_vs_interpreter(
        "cross_attention", attnforge::testing::inputs_for("cross_attention", {1, 8, {{"x", 7}, {"memory", 13}}}), ok);
    auto inputs = attnforge::testing::inputs_for("cross_attention", {2, 8, {{"x", 300}, {"memory", 1000}}});
    const rt::Tensor out = attnforge::testing::kernel_vs_interpreter("cross_attention", inputs, ok);

    attnforge::testing::reverse_tokens(inputs.at("memory"));  // (B, Lk, 512)
    const bool same = attnforge::testing::same_outputs(out, rt::run("cross_attention", inputs),
                                                       "memory reversed, the output unchanged");
    return ok && same ? 0 : 1;
}
