// The machine's fp32 FMA peak, measured: independent fused multiply-adds on the widest vectors the
// CPU has (AVX-512, else AVX2+FMA, else scalar), on N threads at once. And its bf16 dot-product peak
// (AVX512_BF16's vdpbf16ps: 64 flops per instruction, 2·16 lanes of pairs), where the CPU has one, and its
// AMX tile peak where it has AMX: what bf16 kernels are measured against.
#pragma once

#include <optional>

namespace attnforge::cli {

struct Peak {
    double gflops;    // all threads together
    const char* isa;  // "avx512f", "avx2+fma" or "scalar"
};

Peak measure_fma_peak(int threads, double seconds = 0.3);

// nullopt: the CPU has no AVX512_BF16.
std::optional<Peak> measure_bf16_dot_peak(int threads, double seconds = 0.3);

// AMX's tdpbf16ps (16 × 16 × 32 products a tile instruction), where the CPU has AMX and Linux grants the tile
// state: what bf16 kernels with AMX products (Sapphire Rapids and later) are measured against. nullopt otherwise.
std::optional<Peak> measure_bf16_tile_peak(int threads, double seconds = 0.3);

// The bf16 peak bf16 kernels are measured against: the tile peak, else the dot-product peak on AMD's cores (twice
// the FMA peak; Intel's issue vdpbf16ps at half the FMA rate, and bf16 kernels there multiply with float32 FMAs: codegen's
// attention_generator.hpp, bf16_dot_product_pays), else nullopt (the FMA peak).
std::optional<Peak> measure_bf16_peak(int threads, double seconds = 0.3);

}  // namespace attnforge::cli
