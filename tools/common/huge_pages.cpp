#include "huge_pages.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace attnforge::cli {

std::optional<double> anon_huge_page_bytes() {
    std::ifstream rollup("/proc/self/smaps_rollup");
    std::string line;
    while (std::getline(rollup, line)) {
        if (line.rfind("AnonHugePages:", 0) != 0) continue;
        std::istringstream fields(line.substr(sizeof("AnonHugePages:") - 1));
        double kib = 0;
        std::string unit;
        if (fields >> kib >> unit && unit == "kB") return kib * 1024.0;
        return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace attnforge::cli
