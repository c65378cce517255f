// The interpreter's tensor operations: plain loops in float64, one per DSL node kind. Every tensor
// here carries its batch axis (an unbatched graph runs with B = 1).
// Layouts: activation (B, L, D), heads (B, H, L, E), scores (B, H, Lq, Lk), weight (Din, Dout).
#pragma once

#include <attnforge/interp/tensor.hpp>

#include <cmath>
#include <limits>

namespace attnforge::interp::ops {

inline constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

Tensor linear(const Tensor& x, const Tensor& w, const Tensor* bias);
Tensor split_heads(const Tensor& x, std::int64_t heads);
// Every value rounded to float32, then to bf16, to nearest even (attnforge/bf16_bits.hpp): what a bf16 kernel does
// to a float32 value it rounds (EvaluateOptions::round_projection_operands).
void round_to_bf16(Tensor& t);
Tensor merge_heads(const Tensor& x);
// S[b, h, i, j] = scale · Σ_e Q[b, h, i, e] · K[b, h / (Hq/Hkv), j, e]
Tensor scores(const Tensor& q, const Tensor& k, double scale);
// S = max over (b, h, i, j) of |scale| · Σ_e |Q[b, h, i, e] · K[b, h / (Hq/Hkv), j, e]|: what bounds the
// rounding of float32 scores (docs/contract.md §5).
double largest_score_magnitude(const Tensor& q, const Tensor& k, double scale);
double largest_magnitude(const Tensor& t);
// O[b, h, i, e] = Σ_j P[b, h, i, j] · V[b, h / (Hq/Hkv), j, e]
Tensor weighted_sum(const Tensor& p, const Tensor& v);

struct SoftmaxResult {
    Tensor weights;    // (B, H, Lq, Lk); rows with every key masked are all zero
    Tensor logsumexp;  // (B, H, Lq); -inf for fully masked rows
};
// Softmax over the last axis with the row max subtracted.
SoftmaxResult softmax(const Tensor& scores);

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps);
Tensor add(const Tensor& a, const Tensor& b);
Tensor positional_encoding(const Tensor& x);
// Rotary position embedding of heads (B, H, L, E), rotate-half pairing (nodes/rope.hpp).
// offsets: per batch entry, the position of row 0 (rope_in_cache: lengths[b] − L); empty: 0.
Tensor rope(const Tensor& x, double base, const std::vector<std::int64_t>& offsets = {});

// Masks set removed pairs to -inf.
void mask_key_padding(Tensor& scores, const Tensor& padded /* (B, Lk), nonzero = padded */);
void mask_boolean(Tensor& scores, const Tensor& keep /* (B, Lq, Lk), nonzero = takes part */);
// PyTorch's attn_mask (B or 1, H or 1, Lq, Lk): a batch or head axis of size 1 is read at 0 for every b or h.
// Bool: nonzero = takes part. Additive: added to the scores, −∞ removing the pair (a removed pair stays removed).
void mask_broadcast(Tensor& scores, const Tensor& keep);
void add_broadcast_mask(Tensor& scores, const Tensor& bias);

// f(score&, b, h, q, k) for every entry of scores (B, H, Lq, Lk), in memory order.
template <class F>
void for_each_score(Tensor& s, F f) {
    const std::int64_t B = s.dim(0), H = s.dim(1), Lq = s.dim(2), Lk = s.dim(3);
    double* p = s.ptr();
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t i = 0; i < Lq; ++i)
                for (std::int64_t j = 0; j < Lk; ++j, ++p) f(*p, b, h, i, j);
}

// keep(b, h, q, k) -> bool; used for causal and predicate masks.
template <class Keep>
void mask_where(Tensor& s, Keep keep) {
    for_each_score(s, [&](double& score, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
        if (!keep(b, h, i, j)) score = minus_infinity;
    });
}

// f(score, b, h, q, k) -> new score, applied to pairs that are not masked (-inf stays -inf).
template <class F>
void modify(Tensor& s, F f) {
    for_each_score(s, [&](double& score, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
        if (score != minus_infinity) score = f(score, b, h, i, j);
    });
}

}  // namespace attnforge::interp::ops
