// The machine's fp32 FMA peak, measured: independent fused multiply-adds on the widest vectors the
// CPU has (AVX-512, else AVX2+FMA, else scalar), on N threads at once.
#pragma once

namespace attnforge::cli {

struct Peak {
    double gflops;    // all threads together
    const char* isa;  // "avx512f", "avx2+fma" or "scalar"
};

Peak measure_fma_peak(int threads, double seconds = 0.3);

}  // namespace attnforge::cli
