// A candidate schedule compiled just in time: the same registered generator the build runs ahead of
// time (codegen/generators/attention_generator.cpp), with the candidate's knobs as GeneratorParams,
// or the unscheduled pipeline through one of Halide's autoschedulers.
#pragma once

#include "problem.hpp"
#include "workload.hpp"

#include <Halide.h>

#include <string>

namespace attnforge::tune {

class Candidate {
public:
    // Throws Halide::Error or std::exception when the candidate does not compile.
    static Candidate compile(const Problem& p, const SchedulePoint& point, const Halide::Target& target, int threads);

    // Runs once on the workload; throws std::runtime_error with Halide's message on a failure (a
    // bounds check of an autoscheduled pipeline at a size it was not made for, say).
    void run(Workload& w) const;

    double compile_seconds = 0;

private:
    Halide::Callable callable_;
};

// The path of an autoscheduler's plugin library, by strategy name (mullapudi2016, li2018, adams2019).
std::string autoscheduler_plugin(const std::string& strategy);

}  // namespace attnforge::tune
