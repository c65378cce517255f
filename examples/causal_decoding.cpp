// Causal (decoder) self-attention: token t attends to tokens 0..t only. Shown two ways: the kernel
// agrees with the interpreter, and changing the last token changes no earlier output row.
#include <attnforge/testing/kernel_report.hpp>

int main() {
    bool ok = true;
    const std::int64_t L = 33;
    std::printf("mha_causal: %lld tokens\n", static_cast<long long>(L));
    auto inputs = attnforge::testing::inputs_for("mha_causal", {1, 8, {{"x", L}}});
    const auto before = attnforge::testing::kernel_vs_interpreter("mha_causal", inputs, ok);
    auto& x = inputs.at("x").f32;
    for (std::int64_t d = 0; d < 512; ++d) x[static_cast<std::size_t>((L - 1) * 512 + d)] += 1.0f;  // a new last token
    const auto after = attnforge::testing::kernel_vs_interpreter("mha_causal", inputs, ok);
    bool earlier_same = true, last_changed = false;
    for (std::size_t i = 0; i < before.f32.size(); ++i) {
        if (i < static_cast<std::size_t>((L - 1) * 512))
            earlier_same = earlier_same && before.f32[i] == after.f32[i];
        else
            last_changed = last_changed || before.f32[i] != after.f32[i];
    }
    std::printf("  changing token %lld: earlier rows %s, its own row %s\n", static_cast<long long>(L - 1),
                earlier_same ? "bit-identical" : "CHANGED", last_changed ? "changed" : "UNCHANGED");
    return ok && earlier_same && last_changed ? 0 : 1;
}
