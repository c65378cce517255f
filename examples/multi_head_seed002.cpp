// Seed 002's multi-head configuration: model width D = 512, h = 8 heads of E = 64, Q/K/V projections,
// split heads, scaled dot product, softmax, weighted sum, merge heads, output projection — the
// built-in `mha` variant, on one sentence of 10 tokens and on a batch of 4 sequences of 128.
// Property checked: self-attention without positions or masks is permutation-equivariant — reversing
// the tokens of every sequence reverses the rows of its output and changes nothing else.
#include <attnforge/testing/kernel_report.hpp>

namespace rt = attnforge::runtime;

int main() {
    bool ok = true;
    std::printf("mha (D=512, h=8, E=64): seed 002's multi-head attention\n");
    attnforge::testing::kernel_vs_interpreter("mha", attnforge::testing::inputs_for("mha", {1, 8, {{"x", 10}}}), ok);
    auto inputs = attnforge::testing::inputs_for("mha", {4, 8, {{"x", 128}}});
    const rt::Tensor out = attnforge::testing::kernel_vs_interpreter("mha", inputs, ok);

    attnforge::testing::reverse_tokens(inputs.at("x"));
    rt::Tensor reversed = rt::run("mha", inputs);
    attnforge::testing::reverse_tokens(reversed);
    const bool same = attnforge::testing::same_outputs(out, reversed, "tokens reversed, output rows reversed");
    return ok && same ? 0 : 1;
}
