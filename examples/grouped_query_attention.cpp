// Grouped-query attention: 8 query heads share 2 key/value heads (wk, wv are 512 × 128), so K and V
// are a quarter of multi-head attention's; the built-in `gqa` variant.
#include "kernel_report.hpp"

int main() {
    bool ok = true;
    std::printf("gqa: Hq = 8 query heads, Hkv = 2 key/value heads\n");
    examples::kernel_vs_interpreter("gqa", examples::inputs_for("gqa", {1, 8, {{"x", 64}}}), ok);
    examples::kernel_vs_interpreter("gqa", examples::inputs_for("gqa", {1, 8, {{"x", 1024}}}), ok);
    return ok ? 0 : 1;
}
