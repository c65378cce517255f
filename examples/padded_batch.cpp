// A padded batch: sequences of 5 and 9 tokens in one (B = 2, L = 9) tensor with a key padding mask
// (true = padding). Padded keys get exactly zero attention weight, so the first sequence's outputs do
// not depend on what its padding holds.
#include <attnforge/testing/kernel_report.hpp>

int main() {
    bool ok = true;
    const std::int64_t L = 9, lengths[] = {5, 9};
    auto inputs = attnforge::testing::inputs_for("mha_padding", {2, 8, {{"x", L}}});
    auto& mask = inputs.at("key_padding_mask").u8;
    for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t j = 0; j < L; ++j) mask[static_cast<std::size_t>(b * L + j)] = j >= lengths[b];
    std::printf("mha_padding: lengths 5 and 9 padded to 9\n");
    const auto weights = attnforge::testing::kernel_vs_interpreter("mha_padding", inputs, ok, "attention_weights");
    double on_padding = 0;  // weights (B, 8, L, L) of sequence 0 on its padded keys 5..8
    for (std::int64_t h = 0; h < 8; ++h)
        for (std::int64_t q = 0; q < L; ++q)
            for (std::int64_t k = 5; k < L; ++k)
                on_padding += weights.f32[static_cast<std::size_t>(((0 * 8 + h) * L + q) * L + k)];
    const auto out = attnforge::testing::kernel_vs_interpreter("mha_padding", inputs, ok);
    for (std::int64_t j = 5; j < L; ++j)
        for (std::int64_t d = 0; d < 512; ++d)
            inputs.at("x").f32[static_cast<std::size_t>(j * 512 + d)] = 100.0f;  // garbage in the padding
    const auto garbage = attnforge::testing::kernel_vs_interpreter("mha_padding", inputs, ok);
    bool same = true;
    for (std::int64_t i = 0; i < 5 * 512; ++i)
        same = same && out.f32[static_cast<std::size_t>(i)] == garbage.f32[static_cast<std::size_t>(i)];
    std::printf("  total weight on padded keys: %g; sequence 0's 5 outputs with garbage in its padding: %s\n",
                on_padding, same ? "bit-identical" : "CHANGED");
    return ok && on_padding == 0 && same ? 0 : 1;
}
