// The kernel catalogue: which kernels a build makes and registers, from kernel lists and tuning
// records. One place owns the rules that used to live in CMake regexes and again in C++:
//   - tuned lines: per (variant, result, size bucket) the newest record that applies to this build
//     (same canonical DSL text, target, CPU, Halide and attnforge versions, thread count);
//   - order: a variant's tuned lines go before its first line of the lists, so the rule (the first
//     line whose size class holds) prefers them in their bucket;
//   - the block-mask pre-pass: a streaming line with block_mask=1 gets a second kernel,
//     <name>__block_ranges, and a tuned streaming line of the same (variant, result) keeps the knob
//     (the tuner tunes without it: its candidates do not take the extra input).
// The catalogue program (catalogue/src/main.cpp) runs this at configure time and writes the CMake
// include and the registry sources (emit.hpp); attnforge tune links the same code.
#pragma once

#include <attnforge/catalogue/kernel_list.hpp>
#include <attnforge/catalogue/tuning_records.hpp>

#include <map>
#include <string>
#include <vector>

namespace attnforge::catalogue {

// What a tuning record must match, read off this build (tools/tune/tuning_probe.cpp prints the first
// three; CMake knows the rest).
struct BuildFacts {
    std::string target;                            // Halide's host target string
    std::string cpu;                               // /proc/cpuinfo "model name"
    std::map<std::string, std::string> canonical;  // variant -> its canonical DSL text
    std::string halide, attnforge;                 // versions
    int threads = 0;                               // ATTNFORGE_TUNING_THREADS
};

// The probe's JSON ({"target", "cpu", "variants": {name: canonical}}) into BuildFacts; throws
// std::runtime_error when it is not that.
BuildFacts facts_from_probe(const std::string& probe_json, std::string halide, std::string attnforge, int threads);

struct TunedLines {
    std::vector<KernelLine> lines;      // one per (variant, result, bucket), in first-record order
    std::vector<std::string> notes;     // a record that does not apply here, and why
    std::vector<std::string> warnings;  // an unreadable record (the build goes on without it)
};

TunedLines select_tuned_lines(const Database& db, const BuildFacts& here);

struct Kernel {
    KernelLine line;
    std::string name;              // kernel_name(line)
    bool prepass = false;          // block_mask=1: it has a <name>__block_ranges pre-pass kernel
    std::string schedule() const;  // "default" or "tuned, record <id>"
};

struct Catalogue {
    std::vector<Kernel> kernels;     // in rule order
    std::vector<std::string> notes;  // tuned lines with no line of their (variant, result): not built
};

// The lists' lines (in order) with the tuned lines placed; throws std::runtime_error for two kernels
// of one name.
Catalogue assemble(const std::vector<KernelLine>& listed, const std::vector<KernelLine>& tuned);

}  // namespace attnforge::catalogue
