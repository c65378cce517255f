// Write your own variant: a cross-attention graph with grouped-query heads, a score modifier and a
// sliding-window predicate, written in the DSL and evaluated by the reference interpreter. This is the
// README's "Writing a graph" snippet, compiled and run by CTest.
#include <attnforge/dsl.hpp>
#include <attnforge/interp/interpreter.hpp>

#include <cmath>
#include <cstdio>

using namespace attnforge::dsl;

constexpr auto x   = activation<"x", 512>();                                 // (B, L[x], 512)
constexpr auto mem = activation<"memory", 512>();                            // (B, L[memory], 512)
constexpr auto q = split_heads<8>(linear(x, weight<"wq", 512, 512>()));      // (B, 8, L[x], 64)
constexpr auto k = split_heads<2>(linear(mem, weight<"wk", 512, 128>()));    // (B, 2, L[memory], 64): GQA
constexpr auto v = split_heads<2>(linear(mem, weight<"wv", 512, 128>()));
constexpr auto s = modify(score(q, k),                                       // Q·Kᵀ/√E, then a modifier
                          [](auto score, auto, auto h, auto, auto) { return score - 0.1 * h; });
constexpr auto p = softmax(mask(s, predicate([](auto, auto, auto q_idx, auto kv_idx) {
                       return q_idx - kv_idx <= 128 && kv_idx <= q_idx; })));
constexpr auto my_variant = make_graph<"my_variant">(
    linear(merge_heads(weighted_sum(p, v)), weight<"wo", 512, 512>()));

int main() {
    namespace interp = attnforge::interp;
    const auto sig = signature(my_variant);
    std::printf("%s:", sig.name.c_str());
    for (const auto& in : sig.inputs) std::printf(" %s%s", in.name.c_str(), in.shape_symbol().c_str());
    std::printf(" -> %s\n", sig.output.shape_symbol().c_str());

    auto filled = [](std::vector<std::int64_t> shape, double scale) {
        interp::Tensor t(std::move(shape));
        for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = scale * std::sin(0.7 * double(i));
        return t;
    };
    const std::int64_t B = 2, Lq = 5, Lk = 9;
    const interp::Result r = interp::evaluate(
        my_variant, {{"x", filled({B, Lq, 512}, 1.0)}, {"memory", filled({B, Lk, 512}, 1.0)},
                     {"wq", filled({512, 512}, 0.05)}, {"wk", filled({512, 128}, 0.05)},
                     {"wv", filled({512, 128}, 0.05)}, {"wo", filled({512, 512}, 0.05)}});
    const auto& w = r.intermediates.at("attention_weights");  // (B, 8, Lq, Lk)
    // Query 0 sees key 0 only (kv_idx <= q_idx), so its weight there is exactly 1.
    std::printf("output %s, attention weights %s, weight(b=0, h=0, q=0, k=0) = %g\n",
                r.output.shape_string().c_str(), w.shape_string().c_str(), w.data[0]);
    return w.data[0] == 1.0 ? 0 : 1;
}
