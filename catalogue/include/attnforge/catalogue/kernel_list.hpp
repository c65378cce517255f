// Kernel lists (generated/kernels.list, generated/baselines.list, a downstream project's own): one
// kernel per line, "variant result strategy sizes [knob=value ...] [E=N[,N...]] [dtype=T[,T...]] [dtype.<input>=T
// ...]",
// '#' starts a comment. Every field is checked here, with the file and line in the message, before anything
// is generated.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace attnforge::catalogue {

struct KernelLine {
    std::string variant;             // a graph of the variants namespace
    std::string result;              // output | attention_weights | logsumexp | block_ranges (a pre-pass)
    std::string strategy;            // materialized | streaming | unscheduled | an autoscheduler
    std::string sizes;               // its size class (size_class.hpp)
    std::vector<std::string> knobs;  // "name=value" as written, in order (block_mask=1 included; not dtype)
    std::string record;              // the tuning record a tuned line comes from; "" for a list's line
    std::string where;               // "kernels.list:12", or "tuning record <id>"
    std::string storage = "float32";  // dtype=float32|bf16|fp16: what its float tensors are stored in
    // dtype.<input>=<type>: inputs stored in a type of their own ("k=bf16 v=bf16", sorted by name; empty: none).
    // The runtime picks such a kernel for inputs given in exactly those types (runtime/run.hpp).
    std::string input_types;
    // E=64,80,...: the head width of a variant whose E is run-time (one kernel each, picked by the call's E);
    // 0 for a variant that fixes its own.
    int head_width = 0;

    bool has_knob(const std::string& word) const;
    // The knobs as numbers (the tuner's view); throws std::runtime_error for a value that is not one.
    std::map<std::string, int> knob_values() const;
    // "name=value name=value": the knobs as the registry shows them
    std::string knob_text() const;
};

// Throws std::runtime_error "<name>:<line>: ..." for a line with fewer than four fields, an unknown
// result, a strategy or size class that is not one, or a knob that is not name=value.
std::vector<KernelLine> parse_kernel_list(std::istream& in, const std::string& name);
std::vector<KernelLine> read_kernel_list(const std::string& path);  // also throws if unreadable

// The kernel's name in the registry and in its library: "<variant>__<strategy>" for an output,
// "<variant>__<result>" otherwise, with "__E<n>" after the variant for a head width of the line's E list,
// "__bf16" or "__fp16" for those storage types and "__k_bf16_v_bf16" for inputs of types of their own, then
// "__<size class as an identifier>" unless it serves any size: sdpa__E64__materialized__Lk_8192,
// sdpa__E128__attention_weights, sdpa__E64__materialized__1024_Lk_2048, sdpa__E80__bf16__streaming,
// decode__E64__k_bf16_v_bf16__decode__Lq_16, mha__streaming.
std::string kernel_name(const KernelLine& line);

// The first line for (variant, result, storage, input types, head width) whose size class holds for lk: the
// runtime's rule. head_width 0 matches every line (a variant with a static E has lines of head width 0).
const KernelLine* rule_choice(const std::vector<KernelLine>& lines, const std::string& variant,
                              const std::string& result, std::int64_t lk, std::int64_t lq = 0,
                              const std::string& storage = "float32", const std::string& input_types = "",
                              int head_width = 0);

}  // namespace attnforge::catalogue
