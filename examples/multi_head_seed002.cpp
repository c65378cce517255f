// Seed 002's multi-head configuration: model width D = 512, h = 8 heads of E = 64, Q/K/V projections,
// split heads, scaled dot product, softmax, weighted sum, merge heads, output projection — the
// built-in `mha` variant, on one sentence of 10 tokens and on a batch of 4 sequences of 128.
#include <attnforge/testing/kernel_report.hpp>

int main() {
    bool ok = true;
    std::printf("mha (D=512, h=8, E=64): seed 002's multi-head attention\n");
    attnforge::testing::kernel_vs_interpreter("mha", attnforge::testing::inputs_for("mha", {1, 8, {{"x", 10}}}), ok);
    attnforge::testing::kernel_vs_interpreter("mha", attnforge::testing::inputs_for("mha", {4, 8, {{"x", 128}}}), ok);
    return ok ? 0 : 1;
}
