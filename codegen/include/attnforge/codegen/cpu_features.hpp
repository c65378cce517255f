// What the machine running the generator has, where Halide's host detection does not say it.
#pragma once

#if defined(__x86_64__) && !defined(ATTNFORGE_NO_X86)
#include <cpuid.h>
#endif

namespace attnforge::codegen {

// AMX tiles with their bf16 product (CPUID leaf 7: AMX-TILE and AMX-BF16), as the OS reports the CPU.
inline bool cpu_has_amx_bf16_tiles() {
#if defined(__x86_64__) && !defined(ATTNFORGE_NO_X86)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    constexpr unsigned amx_bf16 = 1u << 22, amx_tile = 1u << 24;
    return (edx & (amx_bf16 | amx_tile)) == (amx_bf16 | amx_tile);
#else
    return false;
#endif
}

}  // namespace attnforge::codegen
