// Write your own variant (my_variant.hpp, the "Writing a graph" snippet of docs/dsl.md): its signature, its
// kernels — generated at build time from this folder's kernels.list — against the reference interpreter
// with their time (the materialized kernel, and the streaming one past Lk = 8192), and one property:
// query 0 sees key 0 only (kv_idx <= q_idx), so its weight is 1.
#include "my_variant.hpp"
#include <attnforge/testing/kernel_report.hpp>

namespace rt = attnforge::runtime;

int main() {
    const auto sig = attnforge::dsl::signature(my_variants::my_variant);
    std::printf("%s:", sig.name.c_str());
    for (const auto& in : sig.inputs) std::printf(" %s%s", in.name.c_str(), in.shape_symbol().c_str());
    std::printf(" -> %s\n", sig.output.shape_symbol().c_str());

    bool ok = true;
    const auto inputs = attnforge::testing::synthetic_inputs(sig, {2, 0, {{"x", 5}, {"memory", 9}}}, {});
    attnforge::testing::kernel_vs_interpreter("my_variant", inputs, ok);
    const rt::Tensor w =
        attnforge::testing::kernel_vs_interpreter("my_variant", inputs, ok, "attention_weights");  // (B, 8, Lq, Lk)
    std::printf("  weight(b=0, h=0, q=0, k=0) = %g\n", w.f32[0]);
    const auto long_inputs = attnforge::testing::synthetic_inputs(sig, {1, 0, {{"x", 1000}, {"memory", 1000}}}, {});
    attnforge::testing::kernel_vs_interpreter("my_variant", long_inputs, ok);
    // A memory longer than the materialized kernel's class (Lk <= 8192): the rule picks the streaming one.
    const auto longer = attnforge::testing::synthetic_inputs(sig, {1, 0, {{"x", 64}, {"memory", 8500}}}, {});
    const bool streaming = rt::select_kernel("my_variant", longer).strategy == "streaming";
    std::printf("  memory of 8500 tokens: the rule picks the %s kernel\n", streaming ? "streaming" : "WRONG");
    attnforge::testing::kernel_vs_interpreter("my_variant", longer, ok);
    ok = ok && streaming;
    return ok && w.f32[0] == 1.0f ? 0 : 1;
}
