#pragma once
// The threads a kernel call runs on: its own count, honoured with no process-wide lock.
//
// Halide's AOT pipelines hand every parallel loop to halide_do_par_for. Its default thread pool is one
// per process with one global count, so per-call counts had to take the pool alone. The runtime replaces
// halide_do_par_for with the work-sharing pool here (docs/design.md, "Threads"): the calling thread
// always works on its own loop, and up to `threads - 1` of the pool's workers join it while they are
// idle. Nothing is reserved: calls at once share the workers, a call with one thread runs on its caller
// alone, and no call runs tasks on more threads than its count. Parallel loops met inside a task run
// on that task's thread (one level of parallelism per call: the kernels' outer loop).
#include <cstdint>
#include <string>

namespace attnforge::runtime::call_threads {

// The kernel calls made on this thread, while it lives, use at most `threads` threads, the calling one
// included (at least 1; counts above kMaxThreads are taken as kMaxThreads). One per call, on its stack.
class Budget {
public:
    explicit Budget(int threads);
    ~Budget();
    Budget(const Budget&) = delete;
    Budget& operator=(const Budget&) = delete;

private:
    int previous_;
};

inline constexpr int kMaxThreads = 256;  // Halide's own pool's bound

// The count of calls that give none (RunOptions::threads = 0): set_default's, else HL_NUM_THREADS (as
// Halide's pool reads it), else one per core.
int default_count();
void set_default(int threads);  // 0: back to HL_NUM_THREADS or one per core

// The pool's workers started so far (it starts them as calls ask for them, and keeps them).
int worker_count();

// The most threads that run kernel tasks at once, all calls together (0: one per core, the default). Workers
// join a loop only below it; callers always run their own loops. For a program that leaves cores to others.
void set_core_limit(int threads);

// Halide's error text for the call this thread runs (the run API's error handler writes it; a task that
// failed on a worker has its text moved here when the loop ends).
std::string& error_text();

}  // namespace attnforge::runtime::call_threads
