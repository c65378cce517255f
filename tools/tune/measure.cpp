#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace attnforge::tune {

double median_seconds(const std::function<void()>& call, const Protocol& protocol, const std::atomic<bool>& stop) {
    using clock = std::chrono::steady_clock;
    for (int i = 0; i < protocol.warmup && !stop; ++i) call();
    std::vector<double> times;
    const auto start = clock::now();
    do {
        const auto t0 = clock::now();
        call();
        times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    } while (!stop && (static_cast<int>(times.size()) < protocol.repeats ||
                       std::chrono::duration<double>(clock::now() - start).count() < protocol.min_seconds));
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    return times[times.size() / 2];
}

}  // namespace attnforge::tune
