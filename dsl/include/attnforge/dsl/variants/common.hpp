// Inputs several built-in variants share: sdpa's per-head q, k, v and the seed-002 configuration
// (D = 512, Hq = Hkv = 8, E = 64, no biases). A variant file declares the rest of what it reads.
#pragma once

#include <attnforge/dsl/attention.hpp>
#include <attnforge/dsl/graph.hpp>

namespace attnforge::dsl::variants {

// sdpa's q (B, H, Lq, E), k and v (B, Hkv, Lk, E): H, Hkv and E at run time, Hkv a divisor of H (MHA: Hkv = H, GQA,
// MQA: Hkv = 1); kernels are generated per head width (generated/kernels.list: E=64,80,...).
inline constexpr auto sdpa_q = heads_input<"q", runtime_head_width>();
inline constexpr auto sdpa_k = heads_input<"k", runtime_head_width, "kv", runtime_kv_heads>();
inline constexpr auto sdpa_v = heads_input<"v", runtime_head_width, "kv", runtime_kv_heads>();
// Their scale, optional: the call's `scale`, 1/√E where it gives none (torch's scale=None).
inline constexpr auto sdpa_scale = scale_input();
// The same with E = 64: the variants built on given heads (windows, caps, masks, RoPE).
inline constexpr auto q64 = heads_input<"q", 64>();
inline constexpr auto k64 = heads_input<"k", 64, "kv", runtime_kv_heads>();
inline constexpr auto v64 = heads_input<"v", 64, "kv", runtime_kv_heads>();

inline constexpr auto x512 = activation<"x", 512>();
inline constexpr auto wq = weight<"wq", 512, 512>();
inline constexpr auto wk = weight<"wk", 512, 512>();
inline constexpr auto wv = weight<"wv", 512, 512>();
inline constexpr auto wo = weight<"wo", 512, 512>();

}  // namespace attnforge::dsl::variants
