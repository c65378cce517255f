// Grouped-query attention: 8 query heads share 2 key/value heads (wk, wv are 512 × 128), so K and V
// are a quarter of multi-head attention's; the built-in `gqa` variant.
// Property checked: GQA is multi-head attention whose K and V heads repeat, each shared by its group of
// 4 query heads — `mha` with wk and wv widened to 512 × 512 (KV head j's 64 columns copied into heads
// 4j..4j+3) gives the same output.
#include <attnforge/testing/kernel_report.hpp>

namespace rt = attnforge::runtime;

namespace {

// w (512, 128): KV head j = columns 64j..64j+63; widened (512, 512): head h = KV head h / 4.
rt::Tensor repeat_heads(const rt::Tensor& w) {
    constexpr std::int64_t D = 512, E = 64, group = 4;
    rt::Tensor wide = rt::Tensor::float32({D, 8 * E});
    for (std::int64_t i = 0; i < D; ++i)
        for (std::int64_t h = 0; h < 8; ++h)
            for (std::int64_t e = 0; e < E; ++e)
                wide.f32[i * 8 * E + h * E + e] = w.f32[i * 2 * E + (h / group) * E + e];
    return wide;
}

}  // namespace

int main() {
    bool ok = true;
    std::printf("gqa: Hq = 8 query heads, Hkv = 2 key/value heads\n");
    attnforge::testing::kernel_vs_interpreter("gqa", attnforge::testing::inputs_for("gqa", {1, 8, {{"x", 64}}}), ok);
    const rt::TensorMap inputs = attnforge::testing::inputs_for("gqa", {1, 8, {{"x", 1024}}});
    const rt::Tensor out = attnforge::testing::kernel_vs_interpreter("gqa", inputs, ok);

    rt::TensorMap as_mha = inputs;
    as_mha.insert_or_assign("wk", repeat_heads(inputs.at("wk")));
    as_mha.insert_or_assign("wv", repeat_heads(inputs.at("wv")));
    const bool same = attnforge::testing::same_outputs(out, rt::run("mha", as_mha), "gqa equals mha with K/V heads repeated");
    return ok && same ? 0 : 1;
}
