// A per-call thread count bounds the threads that run the kernel's tasks, also after a call that used
// more and while other calls run, and calls on different threads run at the same time
// (runtime/src/call_threads.cpp). Every task records the thread it runs on through Halide's do_task
// hook; no timing is involved (a call that never meets the other fails after a minute's wait).
#define BOOST_TEST_MODULE runtime_thread_count
#include <attnforge/runtime/call_threads.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <HalideRuntime.h>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <map>
#include <mutex>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace runtime = attnforge::runtime;

namespace {

std::mutex seen_mutex;
std::set<std::thread::id> seen;

void record() {
    std::lock_guard lock(seen_mutex);
    seen.insert(std::this_thread::get_id());
}

int recording_task(void* context, halide_task_t f, int index, std::uint8_t* closure) {
    record();
    return f(context, index, closure);
}

int recording_loop_task(void* context, halide_loop_task_t f, int min, int extent, std::uint8_t* closure, void* parent) {
    record();
    return f(context, min, extent, closure, parent);
}

// The threads that ran tasks of one call.
std::set<std::thread::id> threads_of(const runtime::TensorMap& inputs, int threads) {
    {
        std::lock_guard lock(seen_mutex);
        seen.clear();
    }
    runtime::RunOptions options;
    options.threads = threads;
    runtime::run("sdpa", inputs, options);
    std::lock_guard lock(seen_mutex);
    return seen;
}

struct RecordTasks {
    halide_do_task_t task = halide_set_custom_do_task(recording_task);
    halide_do_loop_task_t loop_task = halide_set_custom_do_loop_task(recording_loop_task);
    ~RecordTasks() {
        halide_set_custom_do_task(task);
        halide_set_custom_do_loop_task(loop_task);
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(one_thread_after_two_runs_on_the_calling_thread_alone) {
    const RecordTasks hooks;
    // Many query tiles, so that a worker left in the pool would take some of them.
    const runtime::TensorMap in = attnforge::testing::synthetic_inputs(
        runtime::kernels_for("sdpa", "output").front()->signature(), {2, 4, {{"q", 512}, {"kv", 512}}}, {});
    const std::set<std::thread::id> caller{std::this_thread::get_id()};
    for (int round = 0; round < 3; ++round) {
        BOOST_TEST_CONTEXT("round " << round) {
            // (Each of the kernel's parallel loops runs on at most two threads; which worker helps which loop
            // varies, so the union is not bounded here: calls_beside_each_other_... counts per loop.)
            BOOST_TEST(threads_of(in, 2).size() >= 1u);
            BOOST_TEST((threads_of(in, 1) == caller));
            BOOST_TEST((threads_of(in, 1) == caller));
            runtime::run("sdpa", in);  // the process default may start workers too
            BOOST_TEST((threads_of(in, 1) == caller));
        }
    }
}

namespace {

// Per parallel loop (its task function), the threads inside its tasks now and at most, and which.
struct LoopTasks {
    int inside = 0, most = 0;
    std::set<std::thread::id> threads;
};
std::mutex loops_mutex;
std::map<halide_task_t, LoopTasks> loops;

int counting_task(void* context, halide_task_t f, int index, std::uint8_t* closure) {
    {
        std::lock_guard lock(loops_mutex);
        LoopTasks& l = loops[f];
        l.most = std::max(l.most, ++l.inside);
        l.threads.insert(std::this_thread::get_id());
    }
    const int status = f(context, index, closure);
    std::lock_guard lock(loops_mutex);
    --loops[f].inside;
    return status;
}

struct CountTasks {
    halide_do_task_t task = halide_set_custom_do_task(counting_task);
    ~CountTasks() { halide_set_custom_do_task(task); }
};

struct Caller {
    const char* variant;
    attnforge::testing::SyntheticSizes sizes;
    int threads;
    runtime::TensorMap inputs{};
    std::set<halide_task_t> loops{};  // its kernel's parallel loops, learnt from a call made alone
};

}  // namespace

// No cap from the cores in these tests: on a machine with fewer cores than the counts, the cap alone would keep
// the counts, and the test could not fail.
struct NoCoreLimit {
    NoCoreLimit() { runtime::call_threads::set_core_limit(runtime::call_threads::kMaxThreads); }
    ~NoCoreLimit() { runtime::call_threads::set_core_limit(0); }
};

BOOST_AUTO_TEST_CASE(calls_beside_each_other_keep_to_their_own_counts) {
    const CountTasks hooks;
    const NoCoreLimit no_cap;
    std::vector<Caller> callers = {{"sdpa", {2, 4, {{"q", 512}, {"kv", 512}}}, 1},
                                   {"sdpa_causal", {2, 4, {{"q", 512}, {"kv", 512}}}, 2},
                                   {"mha", {2, 0, {{"x", 256}}}, 3}};
    for (Caller& c : callers) {
        c.inputs = attnforge::testing::synthetic_inputs(runtime::kernels_for(c.variant, "output").front()->signature(),
                                                        c.sizes, {});
        {
            std::lock_guard lock(loops_mutex);
            loops.clear();
        }
        runtime::RunOptions alone;
        alone.threads = 1;
        runtime::run(c.variant, c.inputs, alone);
        std::lock_guard lock(loops_mutex);
        for (const auto& [f, l] : loops) c.loops.insert(f);
        BOOST_TEST_REQUIRE(!c.loops.empty(), c.variant << " ran no parallel loop");
    }
    {
        std::lock_guard lock(loops_mutex);
        loops.clear();
    }
    const int workers_before = runtime::call_threads::worker_count();
    std::vector<std::thread::id> ids(callers.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < callers.size(); ++i)
        threads.emplace_back([&, i] {
            ids[i] = std::this_thread::get_id();
            runtime::RunOptions options;
            options.threads = callers[i].threads;
            for (int call = 0; call < 40; ++call) runtime::run(callers[i].variant, callers[i].inputs, options);
        });
    for (std::thread& t : threads) t.join();
    std::lock_guard lock(loops_mutex);
    for (std::size_t i = 0; i < callers.size(); ++i) {
        const Caller& c = callers[i];
        BOOST_TEST_CONTEXT(c.variant << " at threads = " << c.threads) {
            int most = 0;
            std::set<std::thread::id> on;
            for (halide_task_t f : c.loops) {
                most = std::max(most, loops[f].most);
                on.insert(loops[f].threads.begin(), loops[f].threads.end());
            }
            BOOST_TEST(most >= 1);
            BOOST_TEST(most <= c.threads);
            if (c.threads == 1) BOOST_TEST((on == std::set<std::thread::id>{ids[i]}));
        }
    }
    // The pool starts only the workers some call asked for: here 2 at most (threads = 3).
    BOOST_TEST(runtime::call_threads::worker_count() <= std::max(workers_before, 2));
}

namespace {

// Two calls meet: the first task of each waits (a minute at most) until a task of the other has begun.
std::mutex meet_mutex;
std::condition_variable meet_cv;
int arrived = 0;
bool both_met = false;
bool waited_in_vain = false;  // the first call's task gave up: the other began only after it
thread_local bool met = false;

int meeting_task(void* context, halide_task_t f, int index, std::uint8_t* closure) {
    if (!met) {
        met = true;
        std::unique_lock lock(meet_mutex);
        if (++arrived == 2) {
            both_met = true;
            meet_cv.notify_all();
        } else {
            waited_in_vain = !meet_cv.wait_for(lock, std::chrono::minutes(1), [] { return both_met; });
        }
    }
    return f(context, index, closure);
}

}  // namespace

BOOST_AUTO_TEST_CASE(two_single_thread_calls_run_at_the_same_time) {
    const halide_do_task_t previous = halide_set_custom_do_task(meeting_task);
    const runtime::TensorMap in = attnforge::testing::synthetic_inputs(
        runtime::kernels_for("sdpa", "output").front()->signature(), {1, 2, {{"q", 256}, {"kv", 256}}}, {});
    std::set<std::thread::id> callers;
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i)
        threads.emplace_back([&] {
            runtime::RunOptions options;
            options.threads = 1;
            runtime::run("sdpa", in, options);
        });
    for (std::thread& t : threads) t.join();
    halide_set_custom_do_task(previous);
    std::lock_guard lock(meet_mutex);
    BOOST_TEST(arrived == 2);
    BOOST_TEST(!waited_in_vain, "the second call's tasks began only after the first call's had waited a minute");
}

// ThreadSanitizer stops a child of a multi-threaded fork that starts threads (its die_after_fork).
#ifndef __SANITIZE_THREAD__
BOOST_AUTO_TEST_CASE(a_child_of_fork_gets_workers_of_its_own) {
    const runtime::TensorMap in = attnforge::testing::synthetic_inputs(
        runtime::kernels_for("sdpa", "output").front()->signature(), {2, 4, {{"q", 256}, {"kv", 256}}}, {});
    runtime::RunOptions two;
    two.threads = 2;
    const runtime::Tensor expected = runtime::run("sdpa", in, two);
    BOOST_TEST_REQUIRE(runtime::call_threads::worker_count() >= 1);
    const pid_t child = fork();
    BOOST_TEST_REQUIRE(child >= 0);
    // The child ends within a minute, or it is stopped and the test fails (a child that took the parent's pool
    // could wait for its workers forever).
    if (child == 0) {  // the parent's workers did not come along: the child starts its own
        int code = runtime::call_threads::worker_count() == 0 ? 0 : 10;
        if (runtime::run("sdpa", in, two).f32 != expected.f32) code += 1;
        if (runtime::call_threads::worker_count() != 1) code += 2;
        _exit(code);
    }
    int status = 0;
    pid_t ended = 0;
    for (int waited_ms = 0; ended == 0 && waited_ms < 60000; waited_ms += 10) {
        ended = waitpid(child, &status, WNOHANG);
        if (ended == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (ended == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    BOOST_TEST_REQUIRE(ended == child, "the child did not end within a minute");
    BOOST_TEST(WIFEXITED(status));
    // 10: the child saw the parent's workers; 1: a different result; 2: it started no worker (or more)
    BOOST_TEST(WEXITSTATUS(status) == 0);
}
#endif

BOOST_AUTO_TEST_CASE(no_worker_joins_beyond_the_core_limit) {
    const RecordTasks hooks;
    const runtime::TensorMap in = attnforge::testing::synthetic_inputs(
        runtime::kernels_for("sdpa", "output").front()->signature(), {2, 4, {{"q", 512}, {"kv", 512}}}, {});
    const std::set<std::thread::id> caller{std::this_thread::get_id()};
    runtime::call_threads::set_core_limit(1);  // the caller takes the one core: no help
    const auto limited = threads_of(in, 2);
    runtime::call_threads::set_core_limit(0);
    BOOST_TEST((limited == caller));
}

namespace {

std::thread::id failing_call_caller;

// Fails the tasks that run on a worker of the caller's call, with an error text, as a failed allocation would.
int failing_on_workers(void* context, halide_task_t f, int index, std::uint8_t* closure) {
    if (std::this_thread::get_id() != failing_call_caller) {
        halide_error(context, "a task failed on a worker (injected)\n");
        return halide_error_code_out_of_memory;
    }
    return f(context, index, closure);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_task_failing_on_a_worker_gives_the_call_its_text) {
    const NoCoreLimit no_cap;
    const runtime::TensorMap in = attnforge::testing::synthetic_inputs(
        runtime::kernels_for("sdpa", "output").front()->signature(), {2, 4, {{"q", 512}, {"kv", 512}}}, {});
    runtime::RunOptions two;
    two.threads = 2;
    failing_call_caller = std::this_thread::get_id();
    const halide_do_task_t previous = halide_set_custom_do_task(failing_on_workers);
    std::string message;
    // A worker takes part in a call as a rule; a call it missed succeeds, and the next is tried.
    for (int call = 0; call < 100 && message.empty(); ++call) {
        try {
            runtime::run("sdpa", in, two);
        } catch (const std::runtime_error& e) {
            message = e.what();
        }
    }
    halide_set_custom_do_task(previous);
    BOOST_TEST_REQUIRE(!message.empty(), "no worker took a task in 100 calls");
    BOOST_TEST(message.find("a task failed on a worker (injected)") != std::string::npos, message);
    BOOST_TEST(runtime::call_threads::error_text().empty());    // taken by the exception
    BOOST_TEST(runtime::run("sdpa", in, two).f32.size() > 0u);  // and the next call runs
}
