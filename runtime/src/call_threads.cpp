#include <attnforge/runtime/call_threads.hpp>

#include <HalideRuntime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace attnforge::runtime::call_threads {

namespace {

// The count the calls on this thread may use (0: no Budget, the default count), and whether this thread
// is running a task of a loop shared with other threads (a parallel loop met there runs on it alone).
thread_local int budget = 0;
thread_local bool inside_shared_task = false;
// Whether this thread is counted among the pool's running threads now (a worker always; a caller while it
// runs a loop, so that a loop met inside an outer one of extent 1 does not count it twice).
thread_local bool counted = false;
thread_local std::string halide_error_text;

std::atomic<int> default_set{0};
std::atomic<int> core_limit{0};  // set_core_limit; 0: one per core

// Read once: hardware_concurrency() asks the system each time, and cores() is called by spinning workers.
int one_per_core() {
    static const int count = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
    return count;
}

int cores() {
    const int set = core_limit.load();
    return set > 0 ? set : one_per_core();
}

int default_from_environment() {
    static const int count = [] {
        if (const char* v = std::getenv("HL_NUM_THREADS"); v && *v) {
            const int n = std::atoi(v);
            if (n > 0) return std::min(n, kMaxThreads);
        }
        return one_per_core();
    }();
    return count;
}

void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

// Spins while `waiting()` holds, for at most `limit`: a decode call's parallel loop lasts tens of
// microseconds, less than a sleeping thread takes to wake (Halide's own pool spins too).
template <class Waiting>
void spin_while(Waiting waiting, std::chrono::microseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (int i = 0; waiting(); ++i) {
        relax();
        if (i % 64 == 63 && std::chrono::steady_clock::now() >= until) return;
    }
}

constexpr std::chrono::microseconds kWorkerSpin{50};
constexpr std::chrono::microseconds kCallerSpin{20};

// One parallel loop of one call: its tasks [next, end) are claimed one at a time by the calling thread
// and by the workers that join (at most `slots` of them).
struct Loop {
    void* user_context;
    halide_task_t task;
    std::uint8_t* closure;
    int end;
    std::atomic<int> next;
    std::atomic<int> error{0};   // the first task's failure; no task starts after it
    int slots = 0;               // workers that may still join (guarded by the pool's mutex)
    std::atomic<int> inside{0};  // workers in it now (changed under the pool's mutex)
    std::string failure_text;    // Halide's error text of the failed task, when a worker's (its CAS winner writes it)

    Loop(void* uc, halide_task_t t, std::uint8_t* c, int min, int extent)
        : user_context(uc), task(t), closure(c), end(min + extent), next(min) {}

    bool tasks_left() const { return next.load(std::memory_order_relaxed) < end; }

    void work(bool by_caller) {
        const bool was_inside = std::exchange(inside_shared_task, true);
        while (error.load(std::memory_order_relaxed) == 0) {
            const int i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= end) break;
            // Through halide_do_task, so that a custom task hook (a profiler, the tests) sees every task.
            if (const int status = halide_do_task(user_context, task, i, closure); status != 0) {
                int none = 0;
                const bool first = error.compare_exchange_strong(none, status);
                // A worker's text goes to the caller with the status (the caller's own stays where it is).
                if (!by_caller) {
                    if (first) failure_text = halide_error_text;
                    halide_error_text.clear();
                }
            }
        }
        inside_shared_task = was_inside;
    }
};

// The workers, and the count of threads running tasks now (callers' and workers'), kept at most one per core:
// a worker joins a loop only while a core is left. Callers' threads are the program's, so they always run
// their own loops; only the help is held back (N callers of k threads on fewer than N·k cores get fewer
// helpers, and none once every core runs a caller).
class Pool {
public:
    // Around fork(): no worker is between two steps of the pool's state when the process is copied.
    void prepare_fork() { mutex_.lock(); }
    void after_fork_in_parent() { mutex_.unlock(); }

    // Runs `loop` on the calling thread with up to `helpers` idle workers joining; returns its status.
    int run(Loop& loop, int helpers) {
        const bool count_caller = !std::exchange(counted, true);
        if (count_caller) running_.fetch_add(1);
        {
            std::lock_guard lock(mutex_);
            for (; workers_ < helpers; ++workers_) {
                try {
                    std::thread([this] { serve(); }).detach();
                } catch (const std::system_error&) {
                    break;  // no more threads to be had: the workers there are
                }
            }
            loop.slots = helpers;
            open_.push_back(&loop);
            open_count_.store(static_cast<int>(open_.size()));
        }
        if (helpers == 1)
            work_.notify_one();
        else
            work_.notify_all();
        loop.work(true);
        {
            std::lock_guard lock(mutex_);
            close(&loop);  // no worker joins from here on
            if (count_caller) running_.fetch_sub(1);
        }
        if (count_caller) {
            counted = false;
            work_.notify_one();  // a core is free for another loop's worker
        }
        // The workers inside finish the tasks they took; none touches `loop` after leaving it.
        spin_while([&] { return loop.inside.load(std::memory_order_acquire) != 0; }, kCallerSpin);
        if (loop.inside.load(std::memory_order_acquire) != 0) {
            std::unique_lock lock(mutex_);
            done_.wait(lock, [&] { return loop.inside.load(std::memory_order_relaxed) == 0; });
        }
        if (!loop.failure_text.empty() && halide_error_text.empty()) halide_error_text = std::move(loop.failure_text);
        return loop.error.load();
    }

    // A loop run on its caller alone occupies a core too (seq_cst with open_count_: a worker that saw the core
    // taken is woken, whichever of the two changes it saw first).
    void enter_serial() { running_.fetch_add(1); }
    void leave_serial() {
        running_.fetch_sub(1);
        wake_if_waited_for();
    }

    // After the count of running threads fell or the core limit rose.
    void wake_if_waited_for() {
        if (open_count_.load() > 0) {
            { std::lock_guard lock(mutex_); }  // a worker checking under the lock sees the new count
            work_.notify_all();
        }
    }

    int workers() {
        std::lock_guard lock(mutex_);
        return workers_;
    }

private:
    // Called with mutex_ held.
    void close(Loop* loop) {
        open_.erase(std::remove(open_.begin(), open_.end(), loop), open_.end());
        open_count_.store(static_cast<int>(open_.size()));
    }

    bool may_join() const { return open_count_.load() > 0 && running_.load() < cores(); }

    // A worker: joins the oldest open loop with tasks left while a core is free, else spins a little, then sleeps.
    void serve() {
        counted = true;
        std::unique_lock lock(mutex_);
        for (;;) {
            while (!open_.empty() && !open_.front()->tasks_left()) close(open_.front());
            if (!may_join()) {
                lock.unlock();
                spin_while([&] { return !may_join(); }, kWorkerSpin);
                lock.lock();
                work_.wait(lock, [&] { return may_join(); });
                continue;
            }
            Loop* loop = open_.front();
            if (--loop->slots == 0) close(loop);
            loop->inside.fetch_add(1, std::memory_order_relaxed);
            running_.fetch_add(1);
            lock.unlock();
            loop->work(false);
            lock.lock();
            running_.fetch_sub(1);
            // The last access to `loop`: its caller may return as soon as it reads zero.
            if (loop->inside.fetch_sub(1, std::memory_order_release) == 1) done_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable work_;  // workers wait for an open loop and a free core
    std::condition_variable done_;  // callers wait for their loop's workers to leave
    std::vector<Loop*> open_;       // loops that workers may join, oldest first
    std::atomic<int> open_count_{0};
    std::atomic<int> running_{0};  // threads running tasks now
    int workers_ = 0;              // started (guarded by mutex_); they live as long as the process
};

// Never destroyed: its workers are detached and sleep until the process ends, so a kernel called while
// static objects are destroyed still finds the pool, and exit() never waits for a worker. A child of fork()
// gets a pool of its own: the parent's workers did not come along, and its condition variables may count
// waiters that are not there (the old one is left as it is).
std::atomic<Pool*> the_pool{nullptr};
Pool* parents_pool = nullptr;  // kept reachable (leak checkers), never used
std::once_flag pool_made;

Pool& pool() {
    std::call_once(pool_made, [] {
        the_pool.store(new Pool);
        pthread_atfork([] { the_pool.load()->prepare_fork(); }, [] { the_pool.load()->after_fork_in_parent(); },
                       [] {
                           parents_pool = the_pool.load();
                           the_pool.store(new Pool);
                       });
    });
    return *the_pool.load(std::memory_order_acquire);
}

int run_serially(void* user_context, halide_task_t task, int min, int extent, std::uint8_t* closure) {
    for (int i = min; i < min + extent; ++i)
        if (const int status = halide_do_task(user_context, task, i, closure); status != 0) return status;
    return 0;
}

int do_par_for(void* user_context, halide_task_t task, int min, int extent, std::uint8_t* closure) {
    if (extent <= 0) return 0;
    const int threads = inside_shared_task ? 1 : std::min(budget > 0 ? budget : default_count(), extent);
    if (threads <= 1) {
        if (counted) return run_serially(user_context, task, min, extent, closure);  // inside a counted loop
        Pool& p = pool();
        p.enter_serial();
        counted = true;
        const int status = run_serially(user_context, task, min, extent, closure);
        counted = false;
        p.leave_serial();
        return status;
    }
    Loop loop(user_context, task, closure, min, extent);
    return pool().run(loop, threads - 1);
}

void install() {
    static const bool installed = [] {
        halide_set_custom_do_par_for(do_par_for);
        return true;
    }();
    (void)installed;
}

}  // namespace

Budget::Budget(int threads) : previous_(budget) {
    install();
    budget = std::clamp(threads, 1, kMaxThreads);
}

Budget::~Budget() {
    budget = previous_;
}

int default_count() {
    const int set = default_set.load(std::memory_order_relaxed);
    return set > 0 ? set : default_from_environment();
}

void set_default(int threads) {
    install();
    default_set.store(std::clamp(threads, 0, kMaxThreads), std::memory_order_relaxed);
}

int worker_count() {
    return pool().workers();
}

void set_core_limit(int threads) {
    core_limit.store(std::clamp(threads, 0, kMaxThreads));
    pool().wake_if_waited_for();
}

std::string& error_text() {
    return halide_error_text;
}

}  // namespace attnforge::runtime::call_threads
