// The main demo: seed 004's worked example through the reference interpreter. Prints the scores
// Q·Kᵀ, the attention weights softmax(Q·Kᵀ/√3) and the output weights·V; then the generated
// seed_attention kernels on the same inputs against the interpreter, with their time.
#include "seed_data.hpp"
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/testing/kernel_report.hpp>

#include <cstdio>

namespace dsl = attnforge::dsl;
namespace interp = attnforge::interp;

namespace {

void print_matrix(const char* title, const interp::Tensor& t, const char* format) {
    const std::int64_t cols = t.shape.back(), rows = t.element_count() / cols;
    std::printf("%s %s\n", title, t.shape_string().c_str());
    for (std::int64_t r = 0; r < rows; ++r) {
        std::printf("  [");
        for (std::int64_t c = 0; c < cols; ++c) std::printf(format, t.data[static_cast<std::size_t>(r * cols + c)]);
        std::printf(" ]\n");
    }
}

}  // namespace

int main() {
    const interp::TensorMap inputs = attnforge::examples::seed_004_inputs();
    std::printf("attnforge: seed 004 worked example, X (3x4), W_Q/W_K/W_V (4x3), through the float64 interpreter\n\n");
    print_matrix("X", inputs.at("x"), " %4.0f");

    // The scores alone: the same projections, score() with scale 1, as a graph of its own.
    constexpr auto x = dsl::unbatched_activation<"x", 4>();
    constexpr auto scores =
        dsl::make_graph<"seed_scores">(dsl::score(dsl::split_heads<1>(dsl::linear(x, dsl::weight<"wq", 4, 3>())),
                                                  dsl::split_heads<1>(dsl::linear(x, dsl::weight<"wk", 4, 3>())), 1.0));
    interp::TensorMap qk = inputs;
    qk.erase("wv");
    print_matrix("scores Q·Kᵀ", interp::evaluate(scores, qk).output, " %6.1f");

    const interp::Result r = interp::evaluate(dsl::variants::seed_attention, inputs);
    print_matrix("attention weights softmax(Q·Kᵀ/√3)", r.intermediates.at("attention_weights"), " %10.6g");
    print_matrix("output weights·V", r.output, " %10.6f");

    std::printf("\nthe generated kernels on the same inputs (float32):\n");
    attnforge::runtime::TensorMap inputs32;
    for (const auto& [name, t] : inputs)
        inputs32.emplace(
            name, attnforge::runtime::Tensor::float32(t.shape, std::vector<float>(t.data.begin(), t.data.end())));
    bool ok = true;
    attnforge::testing::kernel_vs_interpreter("seed_attention", inputs32, ok);
    attnforge::testing::kernel_vs_interpreter("seed_attention", inputs32, ok, "attention_weights");
    return ok ? 0 : 1;
}
