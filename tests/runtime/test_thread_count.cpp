// A per-call thread count bounds the threads that run the kernel's tasks, also after a call that used
// more: Halide's pool is one per process and does not shrink when its count is lowered, so the runtime
// restarts it (runtime/src/run.cpp). Every task records the thread it runs on, through Halide's
// do_task hooks; no timing is involved.
#define BOOST_TEST_MODULE runtime_thread_count
#include <attnforge/runtime/run.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <HalideRuntime.h>
#include <boost/test/unit_test.hpp>

#include <mutex>
#include <set>
#include <thread>

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

int recording_loop_task(void* context, halide_loop_task_t f, int min, int extent, std::uint8_t* closure,
                        void* parent) {
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
            const auto two = threads_of(in, 2);
            BOOST_TEST(two.size() >= 1u);
            BOOST_TEST(two.size() <= 2u);
            BOOST_TEST((threads_of(in, 1) == caller));
            BOOST_TEST((threads_of(in, 1) == caller));
            runtime::run("sdpa", in);  // the process default may start workers too
            BOOST_TEST((threads_of(in, 1) == caller));
        }
    }
}
