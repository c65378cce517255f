// Grouped-query attention: 8 query heads share 2 key/value heads (wk, wv are 512 × 128), so K and V
// are a quarter of multi-head attention's; the built-in `gqa` variant.
#include <attnforge/testing/kernel_report.hpp>

int main() {
    bool ok = true;
    std::printf("gqa: Hq = 8 query heads, Hkv = 2 key/value heads\n");
    attnforge::testing::kernel_vs_interpreter("gqa", attnforge::testing::inputs_for("gqa", {1, 8, {{"x", 64}}}), ok);
    attnforge::testing::kernel_vs_interpreter("gqa", attnforge::testing::inputs_for("gqa", {1, 8, {{"x", 1024}}}), ok);
    return ok ? 0 : 1;
}
