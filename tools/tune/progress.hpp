// What attnforge tune shows while it works: on a terminal, one live line (a bar, trials, elapsed and
// remaining time, the best speedup over the default so far); otherwise one line per candidate.
#pragma once

#include "search.hpp"

#include <cstdio>

namespace attnforge::tune {

class ProgressView {
public:
    explicit ProgressView(std::FILE* out);
    void operator()(const Progress& p);
    void finish();  // ends the live line

private:
    std::FILE* out_;
    bool live_;
    bool open_ = false;
    int last_done_ = -1;
    std::string last_phase_;
};

}  // namespace attnforge::tune
