#include "machine.hpp"

#include <attnforge/catalogue/size_class.hpp>

#include <Halide.h>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <random>

namespace attnforge::tune {

std::string host_target_string() {
    return Halide::get_host_target().to_string();
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            std::string m = colon == std::string::npos ? "" : line.substr(colon + 1);
            m.erase(0, m.find_first_not_of(" \t"));
            return m;
        }
    return "unknown";
}

RecordKey machine_key(const Problem& p, int threads) {
    return {
        p.variant,         p.result,
        p.canonical,       catalogue::size_bucket(p.key_length),
        threads,           host_target_string(),
        cpu_model(),       fmt::format("{}.{}.{}", HALIDE_VERSION_MAJOR, HALIDE_VERSION_MINOR, HALIDE_VERSION_PATCH),
        ATTNFORGE_VERSION, p.storage,
        p.head_width};
}

std::string new_record_id() {
    std::random_device rd;
    std::uint64_t v = (std::uint64_t(rd()) << 32) ^ rd() ^
                      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    return fmt::format("{:012x}", v & 0xffffffffffffULL);
}

std::string utc_now() {
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                       fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

}  // namespace attnforge::tune
