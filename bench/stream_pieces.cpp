// How one core streams two arrays (a decode cache's K and V): each summed whole, one after the other; in
// alternating pieces, as the decode strategy's K and V tiles are read; and in pieces with a software prefetch a
// fixed distance ahead in the same array (_mm_prefetch, hint T1, and NTA: the hint Halide's `prefetch` emits).
// The arrays are 2 MiB-aligned with madvise(MADV_HUGEPAGE), as the CLI's tensors and NumPy's arrays are.
// docs/performance.md, "What bounds performance now". Build and run (x86-64 with AVX-512):
//   g++ -O2 -march=native -o /tmp/stream_pieces bench/stream_pieces.cpp && /tmp/stream_pieces 32768 1024
// (-Wall adds GCC 12's false warning about an uninitialized value inside _mm512_reduce_add_ps.)
// arguments: piece length and prefetch distance, in floats (defaults 32768 = 128 KiB, 1024 = 4 KiB).
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr std::size_t floats = std::size_t{8} * 32768 * 64;  // K of decode B = 1, H = 8, Lk = 32768, E = 64

float* huge_page_array() {
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t bytes = (floats * sizeof(float) + huge - 1) / huge * huge;
    auto* f = static_cast<float*>(std::aligned_alloc(huge, bytes));
    if (f == nullptr) std::exit(1);
    madvise(f, bytes, MADV_HUGEPAGE);
    for (std::size_t i = 0; i < floats; ++i) f[i] = static_cast<float>(i % 7);
    return f;
}

enum class Prefetch { none, t1, nta };

template <Prefetch P>
__attribute__((noinline)) float sum(const float* p, std::size_t n, const float* ahead) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t i = 0; i < n; i += 64) {
        if constexpr (P != Prefetch::none) {
            constexpr _mm_hint hint = P == Prefetch::t1 ? _MM_HINT_T1 : _MM_HINT_NTA;
            for (int line = 0; line < 64; line += 16) _mm_prefetch(ahead + i + line, hint);
        }
        a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

template <Prefetch P>
float in_pieces(const float* k, const float* v, std::size_t piece, std::size_t distance) {
    float s = 0;
    for (std::size_t i = 0; i < floats; i += piece) {
        const std::size_t ahead = std::min(i + distance, floats - piece);
        s += sum<P>(k + i, piece, k + ahead);
        s += sum<P>(v + i, piece, v + ahead);
    }
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t piece = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 32768;
    const std::size_t distance = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024;
    if (piece == 0 || piece % 64 != 0 || floats % piece != 0) {
        std::fprintf(stderr, "the piece length must be a multiple of 64 dividing %zu floats\n", floats);
        return 2;
    }
    const float* k = huge_page_array();
    const float* v = huge_page_array();
    volatile float sink = 0;
    struct Mode {
        const char* name;
        float (*run)(const float*, const float*, std::size_t, std::size_t);
    };
    const Mode modes[] = {
        {"each array whole", [](const float* k, const float* v, std::size_t, std::size_t) {
             return sum<Prefetch::none>(k, floats, k) + sum<Prefetch::none>(v, floats, v);
         }},
        {"alternating pieces", in_pieces<Prefetch::none>},
        {"pieces + prefetch T1 ahead", in_pieces<Prefetch::t1>},
        {"pieces + prefetch NTA ahead", in_pieces<Prefetch::nta>},
    };
    for (const Mode& m : modes) {
        std::vector<double> seconds;
        for (int r = 0; r < 15; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            sink = sink + m.run(k, v, piece, distance);
            seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(seconds.begin(), seconds.end());
        const double median = seconds[seconds.size() / 2];
        std::printf("%-30s piece %zu, ahead %zu floats: %.3f ms, %.1f GB/s\n", m.name, piece, distance, median * 1e3,
                    2.0 * floats * sizeof(float) / median / 1e9);
    }
}
