// One core decoding over a float32 cache the plain way (per head: every score of K, the softmax, then the
// exps times V), with 512-bit and with 256-bit loads, and each phase of one width with the other phase of the
// other: how much the load width alone moves a memory-bound decode. 64 heads of 4096 keys, E = 64 (decode
// B = 8, H = 8, Lk = 4096: 134 MB of K and V), the arrays 2 MiB-aligned in transparent huge pages.
// docs/performance.md, "What bounds performance now". Build and run (x86-64 with AVX-512):
//   g++ -O2 -march=native -ffast-math -o /tmp/decode_load_widths bench/decode_load_widths.cpp && /tmp/decode_load_widths
// (-Wall adds GCC 12's false warning about an uninitialized value inside _mm512_reduce_add_ps.)
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr std::size_t Lk = 4096, E = 64, heads = 64;

float* huge_page_array(std::size_t n) {
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t bytes = (n * sizeof(float) + huge - 1) / huge * huge;
    auto* f = static_cast<float*>(std::aligned_alloc(huge, bytes));
    if (f == nullptr) std::exit(1);
    madvise(f, bytes, MADV_HUGEPAGE);
    for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(i % 7) * 1e-3f;
    return f;
}

alignas(64) float q[E], scores[Lk], out[E];

// The two widths behind one interface, so that both phases are the same code at either width.
struct Loads512 {
    using V = __m512;
    static constexpr std::size_t lanes = 16;
    static V zero() { return _mm512_setzero_ps(); }
    static V load(const float* p) { return _mm512_load_ps(p); }
    static V splat(float x) { return _mm512_set1_ps(x); }
    static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static void store(float* p, V v) { _mm512_store_ps(p, v); }
    static float sum(V v) { return _mm512_reduce_add_ps(v); }
};

struct Loads256 {
    using V = __m256;
    static constexpr std::size_t lanes = 8;
    static V zero() { return _mm256_setzero_ps(); }
    static V load(const float* p) { return _mm256_load_ps(p); }
    static V splat(float x) { return _mm256_set1_ps(x); }
    static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static void store(float* p, V v) { _mm256_store_ps(p, v); }
    static float sum(V v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_hadd_ps(s, s);
        return _mm_cvtss_f32(_mm_hadd_ps(s, s));
    }
};

// Scores of one head's keys: a key's row times q, one accumulator.
template <class W>
void score_keys(const float* K) {
    for (std::size_t k = 0; k < Lk; ++k) {
        typename W::V a = W::zero();
        for (std::size_t i = 0; i < E; i += W::lanes) a = W::fma(W::load(q + i), W::load(K + k * E + i), a);
        scores[k] = W::sum(a);
    }
}

// out = Σ_k exp_k · V_k, E/lanes accumulators.
template <class W>
void weigh_values(const float* V) {
    typename W::V o[E / W::lanes];
    for (auto& v : o) v = W::zero();
    for (std::size_t k = 0; k < Lk; ++k) {
        const typename W::V w = W::splat(scores[k]);
        for (std::size_t i = 0; i < E / W::lanes; ++i) o[i] = W::fma(w, W::load(V + k * E + W::lanes * i), o[i]);
    }
    for (std::size_t i = 0; i < E / W::lanes; ++i) W::store(out + W::lanes * i, o[i]);
}

template <class ScoreLoads, class ValueLoads>
__attribute__((noinline)) void decode_head(const float* K, const float* V) {
    score_keys<ScoreLoads>(K);
    float m = -INFINITY;
    for (float s : scores) m = std::max(m, s);
    for (float& s : scores) s = std::exp(s - m);
    weigh_values<ValueLoads>(V);
}

}  // namespace

int main() {
    const float* K = huge_page_array(heads * Lk * E);
    const float* V = huge_page_array(heads * Lk * E);
    struct Mode {
        const char* name;
        void (*head)(const float*, const float*);
    };
    const Mode modes[] = {{"512-bit loads", decode_head<Loads512, Loads512>},
                          {"256-bit loads", decode_head<Loads256, Loads256>},
                          {"512-bit Q·Kᵀ, 256-bit P·V", decode_head<Loads512, Loads256>},
                          {"256-bit Q·Kᵀ, 512-bit P·V", decode_head<Loads256, Loads512>}};
    std::vector<std::vector<double>> seconds(std::size(modes));
    for (int round = 0; round < 30; ++round)  // modes alternated: the memory's speed drifts
        for (std::size_t m = 0; m < std::size(modes); ++m) {
            const auto t0 = std::chrono::steady_clock::now();
            for (std::size_t h = 0; h < heads; ++h) modes[m].head(K + h * Lk * E, V + h * Lk * E);
            seconds[m].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
    for (std::size_t m = 0; m < std::size(modes); ++m) {
        std::sort(seconds[m].begin(), seconds[m].end());
        const double s = seconds[m][seconds[m].size() / 2];
        std::printf("%-28s %.3f ms  %.1f GB/s\n", modes[m].name, s * 1e3, 2.0 * heads * Lk * E * sizeof(float) / s / 1e9);
    }
    return out[0] == 12345.f;  // keeps the results alive
}
