// Document masking for packed sequences: documents of different lengths share one sequence, each
// token attends causally within its own document (document ids are an input, read by the predicate).
// Property checked: the packed result equals attending to each document on its own with sdpa_causal.
// Then the kernel's time as the same L = 4096 tokens are split into more documents: a pre-pass finds
// each query tile's live key blocks from the document ids and the kernel visits only those (the
// block_mask knob; FlexAttention's block mask), so the time falls with the documents' length.
#include <attnforge/testing/kernel_report.hpp>

namespace rt = attnforge::runtime;

namespace {

// Rows [begin, end) of every head of x (B = 1, H, L, E), as a tensor of their own.
rt::Tensor rows(const rt::Tensor& x, std::int64_t begin, std::int64_t end) {
    const std::int64_t H = x.shape[1], L = x.shape[2], E = x.shape[3];
    rt::Tensor part = rt::Tensor::float32({1, H, end - begin, E});
    for (std::int64_t h = 0; h < H; ++h)
        std::copy_n(x.f32.begin() + (h * L + begin) * E, (end - begin) * E, part.f32.begin() + h * (end - begin) * E);
    return part;
}

double median_ms(const rt::KernelEntry& kernel, const rt::TensorMap& inputs, rt::Tensor& out) {
    std::vector<double> ms;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        rt::run_kernel_into(kernel, inputs, out);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[2];
}

}  // namespace

int main() {
    bool ok = true;
    const std::vector<std::int64_t> lengths = {37, 100, 1, 62};  // four documents packed into L = 200
    const std::int64_t L = 200, H = 2;
    std::printf("document_attention: documents of 37, 100, 1 and 62 tokens packed into L = %lld\n",
                static_cast<long long>(L));
    auto inputs = attnforge::testing::inputs_for("document_attention", {1, H, {{"tokens", L}}});
    auto& ids = inputs.at("document_ids").i32;
    for (std::int64_t d = 0, l = 0; d < static_cast<std::int64_t>(lengths.size()); ++d)
        for (std::int64_t i = 0; i < lengths[static_cast<std::size_t>(d)]; ++i)
            ids[static_cast<std::size_t>(l++)] = static_cast<std::int32_t>(d);
    const rt::Tensor packed = attnforge::testing::kernel_vs_interpreter("document_attention", inputs, ok);

    double worst = 0;
    std::int64_t begin = 0;
    for (std::int64_t n : lengths) {
        const rt::TensorMap alone = {{"q", rows(inputs.at("q"), begin, begin + n)},
                                     {"k", rows(inputs.at("k"), begin, begin + n)},
                                     {"v", rows(inputs.at("v"), begin, begin + n)}};
        const rt::Tensor expected = rt::run("sdpa_causal", alone);
        const rt::Tensor got = rows(packed, begin, begin + n);
        for (std::size_t i = 0; i < got.f32.size(); ++i)
            worst = std::max(worst, double(std::abs(got.f32[i] - expected.f32[i])));
        begin += n;
    }
    std::printf("  packed vs each document alone (sdpa_causal): max |difference| %.2e\n", worst);
    ok = ok && worst <= 1e-5;

    const std::int64_t long_L = 4096;
    auto long_inputs = attnforge::testing::inputs_for("document_attention", {1, 8, {{"tokens", long_L}}});
    const rt::KernelEntry& kernel = rt::select_kernel("document_attention", long_inputs);
    rt::Tensor out = rt::run_kernel(kernel, long_inputs);
    rt::set_default_threads(1);
    std::printf("  %s, B = 1, H = 8, L = %lld, 1 thread:\n", std::string(kernel.name).c_str(),
                static_cast<long long>(long_L));
    for (std::int64_t documents : {1, 4, 16, 64}) {
        auto& long_ids = long_inputs.at("document_ids").i32;
        for (std::int64_t l = 0; l < long_L; ++l)
            long_ids[static_cast<std::size_t>(l)] = static_cast<std::int32_t>(l / (long_L / documents));
        std::printf("    %3lld documents of %4lld tokens: %8.2f ms\n", static_cast<long long>(documents),
                    static_cast<long long>(long_L / documents), median_ms(kernel, long_inputs, out));
    }
    return ok ? 0 : 1;
}
