// Run at configure time by cmake/AttnforgeTuning.cmake (only when tuning records exist): prints, as
// JSON, what a tuning record must match to be used by this build: Halide's host target, the CPU
// model, and the canonical DSL text of every built-in variant.
#include <attnforge/dsl.hpp>

#include <Halide.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>

int main() {
    nlohmann::ordered_json j;
    j["target"] = Halide::get_host_target().to_string();
    std::string cpu = "unknown", line;
    std::ifstream info("/proc/cpuinfo");
    while (std::getline(info, line))
        if (line.rfind("model name", 0) == 0) {
            cpu = line.substr(line.find(':') + 1);
            cpu.erase(0, cpu.find_first_not_of(" \t"));
            break;
        }
    j["cpu"] = cpu;
    j["variants"] = nlohmann::ordered_json::object();
    boost::hana::for_each(attnforge::dsl::builtin_variants, [&](const auto& g) {
        j["variants"][std::string(g.name.view())] = attnforge::dsl::canonical(g);
    });
    std::cout << j.dump() << "\n";
}
