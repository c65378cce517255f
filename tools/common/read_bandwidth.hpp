// The machine's memory read bandwidth, measured: N threads each sum their part of a buffer far larger
// than the caches (512 MiB) with the widest vector loads the CPU has, the fastest of several passes.
// The bound of memory-bound kernels (decoding over a KV cache) as the FMA peak is of the others.
#pragma once

namespace attnforge::cli {

struct Bandwidth {
    double gbs;       // GB/s (10^9 bytes per second), all threads together
    const char* isa;  // the loads: "avx512f", "avx2" or "scalar"
};

Bandwidth measure_read_bandwidth(int threads, int passes = 5);

// One pass over the same buffer (no warm-up): GB/s. `attnforge bench` runs these between a kernel's calls,
// so that the kernel and the bandwidth it is a fraction of are measured in the same moments (bench.cpp).
double read_bandwidth_pass(int threads);

}  // namespace attnforge::cli
