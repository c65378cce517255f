// Cross-attention between different lengths: 7 decoder queries attend to 13 encoder memory tokens
// (seed 001 §7's encoder-decoder attention), then 300 queries to 1000 memory tokens.
#include <attnforge/testing/kernel_report.hpp>

int main() {
    bool ok = true;
    std::printf("cross_attention: queries from x, keys and values from memory\n");
    attnforge::testing::kernel_vs_interpreter(
        "cross_attention", attnforge::testing::inputs_for("cross_attention", {1, 8, {{"x", 7}, {"memory", 13}}}), ok);
    attnforge::testing::kernel_vs_interpreter(
        "cross_attention", attnforge::testing::inputs_for("cross_attention", {2, 8, {{"x", 300}, {"memory", 1000}}}),
        ok);
    return ok ? 0 : 1;
}
