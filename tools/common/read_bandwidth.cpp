#include "read_bandwidth.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <sys/mman.h>

#if (defined(__x86_64__) || defined(__i386__)) && !defined(ATTNFORGE_NO_X86)
#include <immintrin.h>
#define ATTNFORGE_X86 1
#endif

namespace attnforge::cli {

namespace {

constexpr std::size_t buffer_bytes = std::size_t{512} << 20;

// Several independent accumulators, so that the adds never wait on each other: loads are the only limit.
#ifdef ATTNFORGE_X86
__attribute__((target("avx512f"))) float sum_avx512(const float* p, std::size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t i = 0; i + 64 <= n; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
    }
    float out[16];
    _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    float s = 0;
    for (float v : out) s += v;
    return s;
}

__attribute__((target("avx2"))) float sum_avx2(const float* p, std::size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t i = 0; i + 32 <= n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
    }
    float out[8];
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    float s = 0;
    for (float v : out) s += v;
    return s;
}
#endif

float sum_scalar(const float* p, std::size_t n) {
    float a[8] = {};
    for (std::size_t i = 0; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) a[j] += p[i + static_cast<std::size_t>(j)];
    float s = 0;
    for (float v : a) s += v;
    return s;
}

using SumFn = float (*)(const float*, std::size_t);

SumFn best_sum(const char*& isa) {
#ifdef ATTNFORGE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return isa = "avx512f", sum_avx512;
    if (__builtin_cpu_supports("avx2")) return isa = "avx2", sum_avx2;
#endif
    isa = "scalar";
    return sum_scalar;
}

// One buffer for the process, written once (every page backed by memory, not the shared zero page), in
// transparent huge pages where the kernel allows them (madvise before the first write): through 4 KiB
// pages one Zen 4 core streams 22 GB/s, through 2 MiB pages 28-31 GB/s (the hardware prefetcher stops at
// every 4 KiB page), and the inputs the kernels are timed on get huge pages too (tools/attnforge/main.cpp,
// NumPy's arrays for the peers).
const float* buffer() {
    static const std::unique_ptr<float[], void (*)(void*)> data = [] {
        constexpr std::size_t huge_page = std::size_t{2} << 20;
        void* p = std::aligned_alloc(huge_page, buffer_bytes);
        if (p == nullptr) throw std::bad_alloc();
        madvise(p, buffer_bytes, MADV_HUGEPAGE);  // advice only: without THP the buffer is the same
        auto* f = static_cast<float*>(p);
        for (std::size_t i = 0; i < buffer_bytes / sizeof(float); ++i) f[i] = static_cast<float>(i & 7);
        return std::unique_ptr<float[], void (*)(void*)>(f, std::free);
    }();
    return data.get();
}

// GB/s of one pass: `threads` threads, each summing its part of the buffer (whole 64-float steps).
double pass_gbs(SumFn sum, int threads) {
    const float* data = buffer();
    const std::size_t part = buffer_bytes / sizeof(float) / static_cast<std::size_t>(threads) / 64 * 64;
    std::vector<float> sums(static_cast<std::size_t>(threads));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            sums[static_cast<std::size_t>(t)] = sum(data + part * static_cast<std::size_t>(t), part);
        });
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    static volatile float sink = 0;
    for (float v : sums) sink = sink + v;
    return static_cast<double>(part * static_cast<std::size_t>(threads) * sizeof(float)) / s / 1e9;
}

}  // namespace

Bandwidth measure_read_bandwidth(int threads, int passes) {
    const char* isa = nullptr;
    const SumFn sum = best_sum(isa);
    pass_gbs(sum, threads);  // warm-up (page tables, clocks)
    // The fastest pass, as STREAM reports: the bandwidth the machine can give (a pass can only be slowed
    // by others, never sped up).
    double best = 0;
    for (int pass = 0; pass < passes; ++pass) best = std::max(best, pass_gbs(sum, threads));
    return {best, isa};
}

double read_bandwidth_pass(int threads) {
    const char* isa = nullptr;
    return pass_gbs(best_sum(isa), threads);
}

}  // namespace attnforge::cli
