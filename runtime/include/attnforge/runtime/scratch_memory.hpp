// Scratch memory of the generated kernels: the temporaries they allocate per call (projected Q/K/V,
// packed keys, per-task score tiles with a run-time length, a decode split's running maxima) are kept and
// reused by the next call instead of being returned to the system.
//
// Why: glibc serves blocks above its mmap threshold with fresh mappings, so every call page-faults its
// temporaries in again. On this project's VM that costs 15–30 % of a call at L = 128–512 (measured in
// bench/README.md). The runtime installs the cache (halide_set_custom_malloc) before the first kernel
// call. Blocks of every size are cached: per-task tiles of a few KiB at L ≤ 128 went through glibc's
// memalign (and its malloc_consolidate) on every task, 5% of sdpa at L = 128 and 3 of the 15 µs of a
// call at L = 16; so did a decode call's blocks of under 128 bytes (the running maxima and sums of its
// splits, per task and per head), 2 of the 18 µs of a decode call at Lk = 1 (Hq = 32, E = 128, Zen 5).
//
// Bounds: each thread keeps at most kMaxCachedBlocks free blocks (past it the smallest is freed first)
// and kMaxCachedBytes in all (past it the oldest), and reuses a block only for a request of at least half
// its size, so the cache never holds more than one call's worth of temporaries per thread.
#pragma once

#include <cstddef>

namespace attnforge::runtime::scratch {

inline constexpr std::size_t kMaxCachedBlocks = 32;
inline constexpr std::size_t kMaxCachedBytes = std::size_t{256} << 20;
inline constexpr std::size_t kAlignment = 64;  // what Halide requires on x86

// Installs the cache as Halide's allocator (idempotent; run_kernel calls it).
void install();

// Halide's allocator contract: aligned to kAlignment, size rounded up to it, 8 bytes readable on either side.
void* allocate(void* user_context, std::size_t size);
void release(void* user_context, void* block);

// Frees the calling thread's cached blocks (the kernels' pool threads keep theirs until they exit).
void trim_this_thread();

struct Stats {
    std::size_t cached_blocks = 0, cached_bytes = 0;  // free blocks held by the calling thread
    std::size_t reuses = 0, fresh = 0;                // this thread's allocations served each way
};
Stats this_thread_stats();

}  // namespace attnforge::runtime::scratch
