// The measurement protocol of attnforge tune (also printed by `attnforge tune --help`): inputs and
// output allocated once; `warmup` untimed calls; then timed calls until both `repeats` calls and
// `min_seconds` have passed; the median call time. Screening uses a short protocol, the final
// comparison of the best candidates a longer one, repeated in interleaved rounds.
#pragma once

#include <atomic>
#include <functional>

namespace attnforge::tune {

struct Protocol {
    int warmup = 2;
    int repeats = 5;
    double min_seconds = 0.3;
};

inline constexpr Protocol screening{1, 3, 0.0};
inline constexpr Protocol final_round{2, 5, 0.25};
inline constexpr int final_rounds = 5;  // the final time: the median of the rounds' medians

// The median seconds of one call. Stops early (with what it has, at least one timed call) when
// `stop` becomes true.
double median_seconds(const std::function<void()>& call, const Protocol& protocol, const std::atomic<bool>& stop);

}  // namespace attnforge::tune
