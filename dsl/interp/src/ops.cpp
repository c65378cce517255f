#include <attnforge/bf16_bits.hpp>
#include <attnforge/errors.hpp>
#include <attnforge/interp/ops.hpp>

#include <algorithm>
#include <cmath>

namespace attnforge::interp::ops {

namespace {
using i64 = std::int64_t;

// The KV head that query head h reads (docs/contract.md §1): ⌊h / (Hq/Hkv)⌋.
i64 group_size(i64 hq, i64 hkv, const char* what) {
    if (hkv <= 0 || hq % hkv != 0)
        throw input_error(std::string(what) + ": query heads Hq=" + std::to_string(hq) +
                          " must be a multiple of key/value heads Hkv=" + std::to_string(hkv));
    return hq / hkv;
}
}  // namespace

Tensor linear(const Tensor& x, const Tensor& w, const Tensor* bias) {
    const i64 B = x.dim(0), L = x.dim(1), Din = x.dim(2), Dout = w.dim(1);
    Tensor y({B, L, Dout});
    for (i64 r = 0; r < B * L; ++r) {
        double* out = y.ptr() + r * Dout;
        const double* in = x.ptr() + r * Din;
        for (i64 i = 0; i < Din; ++i) {
            const double xi = in[i];
            const double* wrow = w.ptr() + i * Dout;
            for (i64 o = 0; o < Dout; ++o) out[o] += xi * wrow[o];
        }
        if (bias)
            for (i64 o = 0; o < Dout; ++o) out[o] += bias->data[static_cast<std::size_t>(o)];
    }
    return y;
}

Tensor split_heads(const Tensor& x, i64 H) {
    const i64 B = x.dim(0), L = x.dim(1), D = x.dim(2), E = D / H;
    Tensor y({B, H, L, E});
    for (i64 b = 0; b < B; ++b)
        for (i64 h = 0; h < H; ++h)
            for (i64 l = 0; l < L; ++l)
                std::copy_n(x.ptr() + (b * L + l) * D + h * E, E, y.ptr() + ((b * H + h) * L + l) * E);
    return y;
}

Tensor merge_heads(const Tensor& x) {
    const i64 B = x.dim(0), H = x.dim(1), L = x.dim(2), E = x.dim(3), D = H * E;
    Tensor y({B, L, D});
    for (i64 b = 0; b < B; ++b)
        for (i64 h = 0; h < H; ++h)
            for (i64 l = 0; l < L; ++l)
                std::copy_n(x.ptr() + ((b * H + h) * L + l) * E, E, y.ptr() + (b * L + l) * D + h * E);
    return y;
}

Tensor scores(const Tensor& q, const Tensor& k, double scale) {
    const i64 B = q.dim(0), Hq = q.dim(1), Lq = q.dim(2), E = q.dim(3);
    const i64 Hkv = k.dim(1), Lk = k.dim(2);
    const i64 group = group_size(Hq, Hkv, "score");
    Tensor s({B, Hq, Lq, Lk});
    double* out = s.ptr();
    for (i64 b = 0; b < B; ++b)
        for (i64 h = 0; h < Hq; ++h) {
            const double* kh = k.ptr() + (b * Hkv + h / group) * Lk * E;
            for (i64 i = 0; i < Lq; ++i) {
                const double* qi = q.ptr() + ((b * Hq + h) * Lq + i) * E;
                for (i64 j = 0; j < Lk; ++j, ++out) {
                    double acc = 0;
                    for (i64 e = 0; e < E; ++e) acc += qi[e] * kh[j * E + e];
                    *out = acc * scale;
                }
            }
        }
    return s;
}

double largest_score_magnitude(const Tensor& q, const Tensor& k, double scale) {
    Tensor abs_q = q, abs_k = k;
    for (double& x : abs_q.data) x = std::abs(x);
    for (double& x : abs_k.data) x = std::abs(x);
    return largest_magnitude(scores(abs_q, abs_k, std::abs(scale)));
}

void round_to_bf16(Tensor& t) {
    for (double& x : t.data) x = float_from_bf16(bf16_from_float(static_cast<float>(x)));
}

double largest_magnitude(const Tensor& t) {
    double m = 0;
    for (double x : t.data) m = std::max(m, std::abs(x));
    return m;
}

Tensor weighted_sum(const Tensor& p, const Tensor& v) {
    const i64 B = p.dim(0), Hq = p.dim(1), Lq = p.dim(2), Lk = p.dim(3);
    const i64 Hkv = v.dim(1), E = v.dim(3);
    const i64 group = group_size(Hq, Hkv, "weighted_sum");
    Tensor o({B, Hq, Lq, E});
    for (i64 b = 0; b < B; ++b)
        for (i64 h = 0; h < Hq; ++h) {
            const double* vh = v.ptr() + (b * Hkv + h / group) * Lk * E;
            for (i64 i = 0; i < Lq; ++i) {
                const double* pi = p.ptr() + ((b * Hq + h) * Lq + i) * Lk;
                double* oi = o.ptr() + ((b * Hq + h) * Lq + i) * E;
                for (i64 j = 0; j < Lk; ++j) {
                    if (pi[j] == 0.0) continue;  // masked keys contribute nothing, even when V holds inf
                    for (i64 e = 0; e < E; ++e) oi[e] += pi[j] * vh[j * E + e];
                }
            }
        }
    return o;
}

SoftmaxResult softmax(const Tensor& s) {
    const i64 rows = s.dim(0) * s.dim(1) * s.dim(2), Lk = s.dim(3);
    SoftmaxResult r{Tensor(s.shape), Tensor({s.dim(0), s.dim(1), s.dim(2)})};
    for (i64 row = 0; row < rows; ++row) {
        const double* in = s.ptr() + row * Lk;
        double* out = r.weights.ptr() + row * Lk;
        double m = minus_infinity;
        // std::max would drop a NaN score; a NaN anywhere in the row makes the whole row NaN.
        for (i64 j = 0; j < Lk; ++j) m = (in[j] > m || std::isnan(in[j])) && !std::isnan(m) ? in[j] : m;
        if (m == minus_infinity) {  // every key masked (or no keys): zero row, logsumexp -inf
            r.logsumexp.data[static_cast<std::size_t>(row)] = minus_infinity;
            continue;
        }
        double sum = 0;
        for (i64 j = 0; j < Lk; ++j) sum += (out[j] = std::exp(in[j] - m));
        for (i64 j = 0; j < Lk; ++j) out[j] /= sum;
        r.logsumexp.data[static_cast<std::size_t>(row)] = m + std::log(sum);
    }
    return r;
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
    const i64 D = x.dim(x.rank() - 1), rows = x.element_count() / std::max<i64>(D, 1);
    Tensor y(x.shape);
    for (i64 r = 0; r < rows; ++r) {
        const double* in = x.ptr() + r * D;
        double* out = y.ptr() + r * D;
        double mean = 0, var = 0;
        for (i64 d = 0; d < D; ++d) mean += in[d];
        mean /= double(D);
        for (i64 d = 0; d < D; ++d) var += (in[d] - mean) * (in[d] - mean);
        var /= double(D);  // biased variance (docs/contract.md §1)
        const double inv = 1.0 / std::sqrt(var + eps);
        for (i64 d = 0; d < D; ++d) out[d] = (in[d] - mean) * inv * gamma.data[d] + beta.data[d];
    }
    return y;
}

Tensor add(const Tensor& a, const Tensor& b) {
    Tensor y(a.shape);
    for (std::size_t i = 0; i < y.data.size(); ++i) y.data[i] = a.data[i] + b.data[i];
    return y;
}

Tensor positional_encoding(const Tensor& x) {
    const i64 B = x.dim(0), L = x.dim(1), D = x.dim(2);
    Tensor y = x;
    for (i64 pos = 0; pos < L; ++pos)
        for (i64 i = 0; i < D; i += 2) {
            // 1 / 10000^(i/D), i = 2·(column pair index), as in seed 001's div_term
            const double angle = double(pos) * std::exp(double(i) * -(std::log(10000.0) / double(D)));
            for (i64 b = 0; b < B; ++b) {
                double* row = y.ptr() + (b * L + pos) * D;
                row[i] += std::sin(angle);
                row[i + 1] += std::cos(angle);
            }
        }
    return y;
}

Tensor rope(const Tensor& x, double base, const std::vector<i64>& offsets) {
    const i64 B = x.dim(0), H = x.dim(1), L = x.dim(2), E = x.dim(3), half = E / 2;
    Tensor y(x.shape);
    for (i64 b = 0; b < B; ++b)
        for (i64 l = 0; l < L; ++l) {
            const i64 pos = l + (offsets.empty() ? 0 : offsets[static_cast<std::size_t>(b)]);
            for (i64 i = 0; i < half; ++i) {
                const double angle = double(pos) * std::pow(base, -2.0 * double(i) / double(E));
                const double c = std::cos(angle), s = std::sin(angle);
                for (i64 h = 0; h < H; ++h) {
                    const double* in = x.ptr() + ((b * H + h) * L + l) * E;
                    double* out = y.ptr() + ((b * H + h) * L + l) * E;
                    out[i] = in[i] * c - in[i + half] * s;
                    out[i + half] = in[i + half] * c + in[i] * s;
                }
            }
        }
    return y;
}

void mask_key_padding(Tensor& s, const Tensor& padded) {
    const i64 Lk = s.dim(3);
    mask_where(s, [&](i64 b, i64, i64, i64 j) { return padded.data[static_cast<std::size_t>(b * Lk + j)] == 0.0; });
}

namespace {
double broadcast_value(const Tensor& m, i64 b, i64 h, i64 i, i64 j) {
    const i64 B = m.dim(0), H = m.dim(1), Lq = m.dim(2), Lk = m.dim(3);
    const i64 at = (((B == 1 ? 0 : b) * H + (H == 1 ? 0 : h)) * Lq + i) * Lk + j;
    return m.data[static_cast<std::size_t>(at)];
}
}  // namespace

void mask_broadcast(Tensor& s, const Tensor& keep) {
    mask_where(s, [&](i64 b, i64 h, i64 i, i64 j) { return broadcast_value(keep, b, h, i, j) != 0.0; });
}

void add_broadcast_mask(Tensor& s, const Tensor& bias) {
    for_each_score(s, [&](double& score, i64 b, i64 h, i64 i, i64 j) { score += broadcast_value(bias, b, h, i, j); });
}

void mask_boolean(Tensor& s, const Tensor& keep) {
    const i64 Lq = s.dim(2), Lk = s.dim(3);
    mask_where(
        s, [&](i64 b, i64, i64 i, i64 j) { return keep.data[static_cast<std::size_t>((b * Lq + i) * Lk + j)] != 0.0; });
}

}  // namespace attnforge::interp::ops
