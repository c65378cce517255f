// Sliding-window (local) attention: query q sees keys q-128..q. Every weight outside the window is
// exactly zero, and the kernels skip the key blocks wholly outside it.
#include <attnforge/testing/kernel_report.hpp>

int main() {
    bool ok = true;
    const std::int64_t L = 400;
    std::printf("sliding_window_attention: window of 128 keys back, L = %lld\n", static_cast<long long>(L));
    const auto inputs = attnforge::testing::inputs_for("sliding_window_attention", {1, 2, {{"q", L}, {"kv", L}}});
    attnforge::testing::kernel_vs_interpreter("sliding_window_attention", inputs, ok);
    const auto w =
        attnforge::testing::kernel_vs_interpreter("sliding_window_attention", inputs, ok, "attention_weights");
    double outside = 0;
    for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t q = 0; q < L; ++q)
            for (std::int64_t k = 0; k < L; ++k)
                if (k > q || q - k > 128) outside += w.f32[static_cast<std::size_t>((h * L + q) * L + k)];
    std::printf("  total weight outside the window: %g\n", outside);
    return ok && outside == 0 ? 0 : 1;
}
