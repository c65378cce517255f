// Asked once per process: the permission is the process's, so threads started before or after it share it.
// PyTorch's oneDNN asks the same way.
#include <attnforge/runtime/tile_permission.hpp>

#include <cstdio>
#include <mutex>

#if defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace attnforge::runtime {

namespace {

#if defined(__linux__) && defined(__x86_64__)
bool cpu_has_amx_tiles() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    constexpr unsigned amx_bf16 = 1u << 22, amx_tile = 1u << 24;
    return (edx & (amx_bf16 | amx_tile)) == (amx_bf16 | amx_tile);
}
#endif

}  // namespace

bool request_amx_tiles() {
    static std::once_flag once;
    static bool granted = false;
    std::call_once(once, [] {
#if defined(__linux__) && defined(__x86_64__)
        if (!cpu_has_amx_tiles()) return;  // no kernel here has tile instructions to run
        constexpr long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
        granted = syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
        if (!granted)
            std::fprintf(stderr,
                         "attnforge: warning: the kernel refused AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM): "
                         "bf16 kernels built with AMX products will stop with SIGILL; rebuild with "
                         "-DATTNFORGE_KERNEL_TARGETS naming a target without avx512_sapphirerapids\n");
#endif
    });
    return granted;
}

}  // namespace attnforge::runtime
