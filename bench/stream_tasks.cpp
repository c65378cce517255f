// How two threads stream a decode cache's K and V, in the order our decode tasks read them against the order
// ONNX Runtime's GroupQueryAttention does. Ours: tasks (KV head, split of the keys) taken from a shared counter,
// each reading its split tile by tile, a K tile then the V tile; ONNX Runtime's: each thread a fixed half of the
// heads, each head's whole K row block, then its whole V. Each pass only sums the bytes (512-bit loads), so any
// difference is the memory's, not the arithmetic's. K and V of decode B = 1, H = 8, Lk = 32768, E = 64 (134 MB),
// 2 MiB-aligned with madvise(MADV_HUGEPAGE) as the CLI's tensors and NumPy's arrays are.
// docs/performance.md, "What bounds performance now". Build and run (x86-64 with AVX-512):
//   g++ -O2 -march=native -o /tmp/stream_tasks bench/stream_tasks.cpp -lpthread && /tmp/stream_tasks 2 15
// arguments: threads (default 2) and rounds (default 15); each round times every order 5 times and keeps the
// fastest; the report gives each order's median GB/s and its ratio to ONNX Runtime's order within each round.
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t heads = 8, keys = 32768, E = 64, head_floats = keys * E;

float* huge_page_array() {
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t bytes = (heads * head_floats * sizeof(float) + huge - 1) / huge * huge;
    auto* f = static_cast<float*>(std::aligned_alloc(huge, bytes));
    if (f == nullptr) std::exit(1);
    madvise(f, bytes, MADV_HUGEPAGE);
    for (std::size_t i = 0; i < heads * head_floats; ++i) f[i] = static_cast<float>(i % 7) * 1e-3f;
    return f;
}

const float* K = huge_page_array();
const float* V = huge_page_array();
volatile float sink;

float sum(const float* p, std::size_t n) {
    __m512 a = _mm512_setzero_ps(), b = a, c = a, d = a;
    for (std::size_t i = 0; i < n; i += 64) {
        a = _mm512_add_ps(a, _mm512_load_ps(p + i));
        b = _mm512_add_ps(b, _mm512_load_ps(p + i + 16));
        c = _mm512_add_ps(c, _mm512_load_ps(p + i + 32));
        d = _mm512_add_ps(d, _mm512_load_ps(p + i + 48));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)));
}

// Runs work(thread) on `threads` threads (this one included) and returns the seconds it took.
double timed(int threads, const std::function<void(int)>& work) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t) others.emplace_back(work, t);
    work(0);
    for (auto& t : others) t.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Ours: (head, split) tasks from a shared counter, consecutive tasks the consecutive splits of one head.
double ours(int threads, std::size_t split, std::size_t tile) {
    std::atomic<std::size_t> next{0};
    const std::size_t splits = keys / split;
    return timed(threads, [&](int) {
        float s = 0;
        for (std::size_t task; (task = next++) < heads * splits;) {
            const std::size_t head = task / splits, first = task % splits * split;
            for (std::size_t k = first; k < first + split; k += tile) {
                s += sum(K + head * head_floats + k * E, tile * E);
                s += sum(V + head * head_floats + k * E, tile * E);
            }
        }
        sink = s;
    });
}

// ONNX Runtime's: a fixed share of the heads per thread, each head's K whole, then its V.
double ort_order(int threads) {
    return timed(threads, [&](int t) {
        float s = 0;
        for (std::size_t head = t * heads / threads; head < (t + 1) * heads / threads; ++head) {
            s += sum(K + head * head_floats, head_floats);
            s += sum(V + head * head_floats, head_floats);
        }
        sink = s;
    });
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2, rounds = argc > 2 ? std::atoi(argv[2]) : 15;
    if (threads < 1 || rounds < 1) {
        std::fprintf(stderr, "usage: stream_tasks [THREADS >= 1] [ROUNDS >= 1]\n");
        return 2;
    }
    struct Order {
        const char* name;
        std::function<double()> run;
        std::vector<double> gbps;
    };
    std::vector<Order> orders = {
        {"ours, splits 8192, tiles 2048", [&] { return ours(threads, 8192, 2048); }, {}},
        {"ours, splits 2048, tiles 2048", [&] { return ours(threads, 2048, 2048); }, {}},
        {"ours, splits 8192, tiles 8192", [&] { return ours(threads, 8192, 8192); }, {}},
        {"ONNX Runtime's", [&] { return ort_order(threads); }, {}},
    };
    const double bytes = 2.0 * heads * head_floats * sizeof(float);
    for (int r = 0; r < rounds; ++r)
        for (auto& order : orders) {
            double best = 1e9;
            for (int i = 0; i < 5; ++i) best = std::min(best, order.run());
            order.gbps.push_back(bytes / best / 1e9);
        }
    std::printf("%d thread(s), %d rounds: median GB/s; ÷ ONNX Runtime's order, median over rounds (range)\n", threads,
                rounds);
    for (const auto& order : orders) {
        std::vector<double> ratio;
        for (int r = 0; r < rounds; ++r) ratio.push_back(order.gbps[r] / orders.back().gbps[r]);
        std::printf("  %-30s %5.1f GB/s   %.3f (%.3f-%.3f)\n", order.name, median(order.gbps), median(ratio),
                    *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()));
    }
}
