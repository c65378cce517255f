// generated/kernels.list as attnforge tune reads it: which line (strategy, knobs) the build's rule
// picks for a variant, result and key length. That kernel is the "default" every search starts from.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnforge::tune {

struct KernelLine {
    std::string variant, result, strategy, sizes;
    std::map<std::string, int> knobs;  // the line's knob overrides
};

// Throws std::runtime_error if the file cannot be read or a line is malformed.
std::vector<KernelLine> read_kernel_list(const std::string& path);

// The first line for (variant, result) whose size class holds for lk, as the runtime's rule does.
std::optional<KernelLine> rule_choice(const std::vector<KernelLine>& lines, const std::string& variant,
                                      const std::string& result, std::int64_t lk);

}  // namespace attnforge::tune
