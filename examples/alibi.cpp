// ALiBi: no positional encoding; each head h subtracts slope_h · |q − k| from its scores (slopes
// 2^(−8(h+1)/8)), so attention decays with distance, fastest in head 0. Printed: the mean weight a query
// puts on the key 1 and the key 32 tokens back, per head.
#include <attnforge/testing/kernel_report.hpp>

int main() {
    bool ok = true;
    const std::int64_t L = 64;
    std::printf("alibi_attention: 8 heads, L = %lld\n", static_cast<long long>(L));
    const auto inputs = attnforge::testing::inputs_for("alibi_attention", {1, 8, {{"q", L}, {"kv", L}}});
    attnforge::testing::kernel_vs_interpreter("alibi_attention", inputs, ok);
    const auto w = attnforge::testing::kernel_vs_interpreter("alibi_attention", inputs, ok, "attention_weights");
    double near_first = 0, near_last = 0;
    for (std::int64_t h = 0; h < 8; ++h) {
        double near = 0, far = 0;
        for (std::int64_t q = 32; q < L; ++q) {
            near += w.f32[static_cast<std::size_t>((h * L + q) * L + q - 1)];
            far += w.f32[static_cast<std::size_t>((h * L + q) * L + q - 32)];
        }
        std::printf("  head %lld: mean weight 1 back %.4f, 32 back %.4f\n", static_cast<long long>(h), near / 32,
                    far / 32);
        if (h == 0) near_first = near;
        if (h == 7) near_last = near;
    }
    return ok && near_first > near_last ? 0 : 1;  // the steepest slope keeps attention closest
}
