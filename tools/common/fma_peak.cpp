#include "fma_peak.hpp"

#include <attnforge/runtime/tile_permission.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

// The vector loops exist on x86 only; elsewhere the portable loop (which the compiler vectorizes for
// the target's own FMA) measures the peak (read_bandwidth.cpp does the same).
#if (defined(__x86_64__) || defined(__i386__)) && !defined(ATTNFORGE_NO_X86)
#include <immintrin.h>
#define ATTNFORGE_X86 1
#endif

namespace attnforge::cli {

namespace {

// AVX2 has 16 vector registers: 12 accumulators and the two constants fit (16 would spill, and the
// loop would measure loads and stores: half the FMA peak on Zen 3); 12 still cover 2 ports x 4 cycles.
constexpr int avx2_accumulators = 12;

#ifdef ATTNFORGE_X86
// 16 independent accumulators hide the FMA latency (4 cycles) on two FMA ports.
__attribute__((target("avx512f"))) float fma_loop_avx512(long iterations) {
    __m512 acc[16];
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(float(i));
    for (long n = 0; n < iterations; ++n)
        for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
    float out[16], sum = 0;
    _mm512_storeu_ps(out, s);
    for (float v : out) sum += v;
    return sum;
}

// vdpbf16ps: acc += a₂ᵢ·b₂ᵢ + a₂ᵢ₊₁·b₂ᵢ₊₁ per float32 lane; as many independent accumulators.
__attribute__((target("avx512f,avx512bf16"))) float bf16_dot_loop(long iterations) {
    __m512 acc[16];
    const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
    const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-4f), _mm512_set1_ps(1e-4f));
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(float(i));
    for (long n = 0; n < iterations; ++n)
        for (int i = 0; i < 16; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
    float out[16], sum = 0;
    _mm512_storeu_ps(out, s);
    for (float v : out) sum += v;
    return sum;
}

// tdpbf16ps: a 16 × 16 float32 tile += 16 × 32 bf16 · 32 × 16 bf16, 16384 flops. Four accumulator tiles
// (tmm0-3) from two A (tmm4, 5) and two B (tmm6, 7) tiles, as a 32 × 32 register block of a matrix product:
// independent accumulators, operands loaded once (the instruction's peak, not the loads').
struct TileConfig {
    std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
    std::uint16_t column_bytes[16] = {};
    std::uint8_t rows[16] = {};
};

__attribute__((target("amx-tile,amx-bf16"))) float bf16_tile_loop(long iterations) {
    TileConfig config;
    for (int t = 0; t < 8; ++t) {
        config.column_bytes[t] = 64;
        config.rows[t] = 16;
    }
    // Non-zero operands (2⁻⁷ in bf16: the sums stay finite), as a real product's: the tile unit's power, and so
    // its clock, depends on the data.
    alignas(64) std::uint16_t operand[16 * 32];
    for (std::uint16_t& v : operand) v = 0x3c00;
    alignas(64) float out[16 * 16];
    _tile_loadconfig(&config);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, operand, 64);
    _tile_loadd(5, operand, 64);
    _tile_loadd(6, operand, 64);
    _tile_loadd(7, operand, 64);
    for (long n = 0; n < iterations; ++n) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iterations) {
    __m256 acc[avx2_accumulators];
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < avx2_accumulators; ++i) acc[i] = _mm256_set1_ps(float(i));
    for (long n = 0; n < iterations; ++n)
        for (int i = 0; i < avx2_accumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    float out[8], sum = 0;
    __m256 s = acc[0];
    for (int i = 1; i < avx2_accumulators; ++i) s = _mm256_add_ps(s, acc[i]);
    _mm256_storeu_ps(out, s);
    for (float v : out) sum += v;
    return sum;
}
#endif

float fma_loop_scalar(long iterations) {
    float acc[16];
    for (int i = 0; i < 16; ++i) acc[i] = float(i);
    for (long n = 0; n < iterations; ++n)
        for (int i = 0; i < 16; ++i) acc[i] = acc[i] * 0.999999f + 1e-7f;
    float sum = 0;
    for (float v : acc) sum += v;
    return sum;
}

// `body(n)` runs n iterations of `per_iteration` independent vector instructions of
// `flops_per_instruction` each: calibrated on one thread, then run on all threads at once; GFLOP/s of
// all threads together.
template <class Body>
double measure_peak(int threads, double seconds, double flops_per_instruction, int per_iteration, Body body) {
    long iterations = 1 << 16;
    for (;;) {
        const auto t0 = std::chrono::steady_clock::now();
        volatile float sink = body(iterations);
        (void)sink;
        const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (dt > seconds / 4) {
            iterations = static_cast<long>(double(iterations) * seconds / dt);
            break;
        }
        iterations *= 4;
    }
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    std::vector<float> sinks(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            ++ready;
            while (!go) std::this_thread::yield();
            sinks[static_cast<std::size_t>(t)] = body(iterations);
        });
    while (ready < threads) std::this_thread::yield();
    const auto t0 = std::chrono::steady_clock::now();
    go = true;
    for (auto& th : pool) th.join();
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double flops = flops_per_instruction * per_iteration * double(iterations) * threads;
    return flops / dt / 1e9;
}

}  // namespace

Peak measure_fma_peak(int threads, double seconds) {
#ifdef ATTNFORGE_X86
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f");
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    auto body = [&](long iterations) {
        return avx512 ? fma_loop_avx512(iterations) : avx2 ? fma_loop_avx2(iterations) : fma_loop_scalar(iterations);
    };
#else
    const bool avx512 = false, avx2 = false;
    auto body = [](long iterations) { return fma_loop_scalar(iterations); };
#endif
    const int lanes = avx512 ? 16 : avx2 ? 8 : 1;
    const int per_iteration = avx2 && !avx512 ? avx2_accumulators : 16;
    return {measure_peak(threads, seconds, 2.0 * lanes, per_iteration, body),
            avx512 ? "avx512f" : avx2 ? "avx2+fma" : "scalar"};
}

std::optional<Peak> measure_bf16_dot_peak(int threads, double seconds) {
#ifdef ATTNFORGE_X86
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512bf16")) return std::nullopt;
    return Peak{measure_peak(threads, seconds, 64.0, 16, [](long iterations) { return bf16_dot_loop(iterations); }),
                "avx512_bf16"};
#else
    (void)threads;
    (void)seconds;
    return std::nullopt;
#endif
}

std::optional<Peak> measure_bf16_tile_peak(int threads, double seconds) {
#ifdef ATTNFORGE_X86
    __builtin_cpu_init();
    if (!runtime::request_amx_tiles()) return std::nullopt;  // no AMX, or Linux refused the tile state
    return Peak{measure_peak(threads, seconds, 16.0 * 16 * 32 * 2, 4, [](long n) { return bf16_tile_loop(n); }),
                "amx_bf16"};
#else
    (void)threads;
    (void)seconds;
    return std::nullopt;
#endif
}

std::optional<Peak> measure_bf16_peak(int threads, double seconds) {
    if (std::optional<Peak> tiles = measure_bf16_tile_peak(threads, seconds)) return tiles;
    // Intel's cores issue vdpbf16ps at half the FMA rate (the generator's rule is by target: Intel's multiply with
    // FMAs where there are no tiles); decided by the vendor, not by comparing two probes a loaded machine can flip.
#ifdef ATTNFORGE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_is("intel")) return std::nullopt;
#endif
    return measure_bf16_dot_peak(threads, seconds);
}

}  // namespace attnforge::cli
