// Attention variants written as a user writes them: masks and score modifiers as lambdas, not built-ins, each
// beside the built-in that means the same where one exists. Multi-query attention as the measurements of
// FlexAttention's own examples use it: 8 query heads, one key/value head, E = 64, one sequence ("tokens").
// Built by this folder's CMakeLists.txt with attnforge_add_kernel_library, as a project of its own would;
// bench/user_variants/grid.py times them (bench/run --user), tests/kernels/test_user_variants.cpp checks them
// against the interpreter and probes which key blocks their kernels visit.
#pragma once

#include <attnforge/dsl.hpp>

namespace user_variants {

using namespace attnforge::dsl;

constexpr auto q = heads_input<"q", 64, "tokens", 8>();  // (B, 8, L, 64)
constexpr auto k = heads_input<"k", 64, "tokens", 1>();  // (B, 1, L, 64): one head, shared
constexpr auto v = heads_input<"v", 64, "tokens", 1>();

inline constexpr int window = 256;  // keys back from the query, the query itself not counted
inline constexpr int chunk = 256;   // chunked attention's chunk
inline constexpr int globals = 64;  // the global tokens every query sees

// Causal, as a lambda and built in.
inline constexpr auto lambda_causal =
    make_graph<"lambda_causal">(attention(q, k, v, predicate([](auto, auto, auto q_idx, auto kv_idx) {
                                              return kv_idx <= q_idx;
                                          })));
inline constexpr auto builtin_causal = make_graph<"builtin_causal">(attention(q, k, v, causal));

// A causal window of 256 keys back, as a lambda and built in.
constexpr auto in_window = predicate(
    [](auto, auto, auto q_idx, auto kv_idx) { return kv_idx <= q_idx && q_idx - kv_idx <= window; });
inline constexpr auto lambda_window = make_graph<"lambda_window">(attention(q, k, v, in_window));
inline constexpr auto builtin_window = make_graph<"builtin_window">(attention(q, k, v, sliding_window(window)));

// The same window with its length given at run time (an int32 scalar input): the kernel's bounds over each block
// read it, so it skips what the fixed window skips.
inline constexpr auto window_length = scalar_index<"window">();
inline constexpr auto lambda_runtime_window =
    make_graph<"lambda_runtime_window">(attention(q, k, v, predicate([](auto, auto, auto q_idx, auto kv_idx) {
                                                      return kv_idx <= q_idx && q_idx - kv_idx <= window_length();
                                                  })));

// Chunked causal attention (Llama 4's local layers): a query sees the keys of its own chunk, up to itself.
inline constexpr auto lambda_chunked =
    make_graph<"lambda_chunked">(attention(q, k, v, predicate([](auto, auto, auto q_idx, auto kv_idx) {
                                               using ex::floor;
                                               return kv_idx <= q_idx && floor(q_idx / chunk) == floor(kv_idx / chunk);
                                           })));

// Global tokens plus a causal window (Longformer, BigBird): the first 64 keys and the window.
inline constexpr auto lambda_global_window =
    make_graph<"lambda_global_window">(attention(q, k, v, predicate([](auto, auto, auto q_idx, auto kv_idx) {
                                                     return kv_idx <= q_idx &&
                                                            (kv_idx < globals || q_idx - kv_idx <= window);
                                                 })));

// A dilated causal window: every second key within 512 back.
inline constexpr auto lambda_dilated =
    make_graph<"lambda_dilated">(attention(q, k, v, predicate([](auto, auto, auto q_idx, auto kv_idx) {
                                               using ex::floor;
                                               const auto distance = q_idx - kv_idx;
                                               return kv_idx <= q_idx && distance <= 2 * window &&
                                                      floor(distance / 2.0) * 2 == distance;
                                           })));

// A prefix LM (T5's, UniLM): every query sees the first prefix_length[b] keys, and the rest causally. The length is
// read at b alone, so inside the kernel the predicate's bounds over a block read it: blocks above the diagonal past
// the prefix are skipped with no pre-pass, and blocks below the diagonal or inside the prefix are full.
inline constexpr auto prefix_length = batch_indices<"prefix_length">();
inline constexpr auto lambda_prefix =
    make_graph<"lambda_prefix">(attention(q, k, v, predicate([](auto b, auto, auto q_idx, auto kv_idx) {
                                              return kv_idx <= q_idx || kv_idx < prefix_length(b);
                                          })));

// T5's bucketed relative bias (causal: 32 buckets, exact below 16, logarithmic up to 128) read from an (8, 32)
// table, then a tanh soft-cap of 20, over the causal window; against lambda_window, the modifier's cost.
inline constexpr auto bucket_bias = weight<"bucket_bias", 8, 32>();
constexpr auto t5_bias_and_cap = [](auto score, auto, auto h, auto q_idx, auto kv_idx) {
    using ex::floor;
    using ex::log;
    using ex::min;
    using ex::select;
    using ex::tanh;
    const auto distance = q_idx - kv_idx;
    const auto far = min(16 + floor(log(distance / 16.0) / 2.0794415416798357 * 16), 31);  // log(128 / 16)
    const auto biased = score + bucket_bias(h, select(distance < 16, distance, far));
    return 20 * tanh(biased / 20);
};
inline constexpr auto lambda_t5_bias =
    make_graph<"lambda_t5_bias">(weighted_sum(softmax(mask(modify(score(q, k), t5_bias_and_cap), in_window)), v));

// ALiBi (slope 2^-(h+1) for 8 heads) over causal; against lambda_causal, its cost.
inline constexpr auto lambda_alibi = make_graph<"lambda_alibi">(weighted_sum(
    softmax(mask(modify(score(q, k),
                        [](auto score, auto, auto h, auto q_idx, auto kv_idx) {
                            return score - ex::exp2(-(h + 1)) * ex::abs(q_idx - kv_idx);
                        }),
                 causal)),
    v));

// A tanh soft-cap of 20 (Gemma 2) over causal; against lambda_causal, its cost.
inline constexpr auto lambda_softcap = make_graph<"lambda_softcap">(weighted_sum(
    softmax(mask(modify(score(q, k), [](auto score, auto, auto, auto, auto) { return 20 * ex::tanh(score / 20); }),
                 causal)),
    v));

// The soft-cap given at run time (a float32 scalar input, Gemma 2's 50 or 30); against lambda_softcap.
inline constexpr auto cap = scalar_value<"cap">();
inline constexpr auto lambda_runtime_softcap = make_graph<"lambda_runtime_softcap">(weighted_sum(
    softmax(mask(modify(score(q, k), [](auto score, auto, auto, auto, auto) { return cap() * ex::tanh(score / cap()); }),
                 causal)),
    v));

// A per-key penalty (later keys weigh less: score − log(kv_idx + 1) / 4) over causal; against lambda_causal.
inline constexpr auto lambda_key_penalty = make_graph<"lambda_key_penalty">(weighted_sum(
    softmax(mask(modify(score(q, k),
                        [](auto score, auto, auto, auto, auto kv_idx) { return score - ex::log(kv_idx + 1) / 4; }),
                 causal)),
    v));

inline constexpr auto all =
    boost::hana::make_tuple(lambda_causal, builtin_causal, lambda_window, builtin_window, lambda_runtime_window,
                            lambda_chunked, lambda_global_window, lambda_dilated, lambda_prefix, lambda_t5_bias,
                            lambda_alibi, lambda_softcap, lambda_runtime_softcap, lambda_key_penalty);

}  // namespace user_variants
