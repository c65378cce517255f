#include "kernel_list.hpp"

#include <attnforge/runtime/size_class.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attnforge::tune {

std::vector<KernelLine> read_kernel_list(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read the kernel list '" + path + "'");
    std::vector<KernelLine> lines;
    std::string text;
    for (int number = 1; std::getline(in, text); ++number) {
        std::istringstream words(text);
        KernelLine k;
        if (!(words >> k.variant) || k.variant.front() == '#') continue;
        if (!(words >> k.result >> k.strategy >> k.sizes))
            throw std::runtime_error(path + ":" + std::to_string(number) +
                                     ": a kernel line needs variant, result, strategy and sizes");
        std::string knob;
        while (words >> knob) {
            const auto eq = knob.find('=');
            if (eq == std::string::npos)
                throw std::runtime_error(path + ":" + std::to_string(number) + ": bad knob '" + knob + "'");
            // block_mask adds the pre-pass's input, which candidates compiled just in time do not get:
            // the tuner tunes the kernel without it (docs/tuning.md).
            if (knob.substr(0, eq) == "block_mask") continue;
            k.knobs[knob.substr(0, eq)] = std::stoi(knob.substr(eq + 1));
        }
        lines.push_back(std::move(k));
    }
    return lines;
}

std::optional<KernelLine> rule_choice(const std::vector<KernelLine>& lines, const std::string& variant,
                                      const std::string& result, std::int64_t lk) {
    for (const auto& k : lines)
        if (k.variant == variant && k.result == result && runtime::size_class_holds(k.sizes, lk)) return k;
    return std::nullopt;
}

}  // namespace attnforge::tune
