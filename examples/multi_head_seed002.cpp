// Seed 002's multi-head configuration: model width D = 512, h = 8 heads of E = 64, Q/K/V projections,
// split heads, scaled dot product, softmax, weighted sum, merge heads, output projection — the
// built-in `mha` variant, on one sentence of 10 tokens and on a batch of 4 sequences of 128.
// Property checked: self-attention without positions or masks is permutation-equivariant — reversing
// the tokens of every sequence reverses the rows of its output and changes nothing else.
#include <attnforge/testing/kernel_report.hpp>

#include <algorithm>

namespace rt = attnforge::runtime;

int main() {
    bool ok = true;
    std::printf("mha (D=512, h=8, E=64): seed 002's multi-head attention\n");
    attnforge::testing::kernel_vs_interpreter("mha", attnforge::testing::inputs_for("mha", {1, 8, {{"x", 10}}}), ok);
    auto inputs = attnforge::testing::inputs_for("mha", {4, 8, {{"x", 128}}});
    const rt::Tensor out = attnforge::testing::kernel_vs_interpreter("mha", inputs, ok);

    // Rows l and L-1-l of each (L, D) matrix of x, and of the output, swapped.
    auto reverse_rows = [](std::vector<float>& v, std::int64_t B, std::int64_t L, std::int64_t D) {
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t l = 0; l < L / 2; ++l)
                std::swap_ranges(v.begin() + (b * L + l) * D, v.begin() + (b * L + l + 1) * D,
                                 v.begin() + (b * L + L - 1 - l) * D);
    };
    rt::Tensor& x = inputs.at("x");
    reverse_rows(x.f32, x.shape[0], x.shape[1], x.shape[2]);
    rt::Tensor reversed = rt::run("mha", inputs);
    reverse_rows(reversed.f32, reversed.shape[0], reversed.shape[1], reversed.shape[2]);
    const bool same = attnforge::testing::same_outputs(out, reversed, "tokens reversed, output rows reversed");
    return ok && same ? 0 : 1;
}
