// attnforge list [--json]: every variant with its inputs and output, and its kernels: strategy, size
// class (the rule), what they compute, their schedule (default or tuned, with the tuning record), and
// the target they were built for.
#include "commands.hpp"
#include <attnforge/runtime/run.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ostream>

namespace attnforge::cli {

namespace {

nlohmann::json tensor_json(const dsl::tensor_spec& s) {
    nlohmann::json j = {{"name", s.name}, {"shape", s.shape_symbol()}, {"dtype", dsl::element_type_name(s.dtype)}};
    if (s.optional()) j["optional"] = true;  // a scale: 1/sqrt(E) where a call gives none
    return j;
}

}  // namespace

int list(const ListOptions& options, std::ostream& out) {
    nlohmann::json all = nlohmann::json::array();
    for (std::string_view variant : runtime::variants()) {
        const auto outputs = runtime::kernels_for(variant, "output");
        const dsl::graph_signature sig = outputs.front()->signature();
        nlohmann::json v = {
            {"variant", variant}, {"inputs", nlohmann::json::array()}, {"output", tensor_json(sig.output)}};
        for (const auto& in : sig.inputs) v["inputs"].push_back(tensor_json(in));
        v["kernels"] = nlohmann::json::array();
        auto add = [&](const runtime::KernelEntry& k) {
            v["kernels"].push_back({{"name", k.name},
                                    {"result", k.result},
                                    {"dtype", k.storage},
                                    {"input_types", k.input_types},
                                    {"head_width", k.head_width},  // 0: the variant's own, static E
                                    {"strategy", k.strategy},
                                    {"sizes", k.size_class},
                                    {"knobs", k.knobs},
                                    {"schedule", k.schedule},
                                    {"target", k.metadata()->target}});
        };
        for (std::string_view dtype : {"float32", "bf16", "fp16"})
            for (std::string_view result : {"output", "attention_weights", "logsumexp"})
                for (const runtime::KernelEntry* k : runtime::kernels_for(variant, result, dtype)) add(*k);
        // Kernels with inputs in types of their own (KernelEntry::input_types), after the others.
        for (const runtime::KernelEntry& k : runtime::registry())
            if (k.variant == variant && !k.input_types.empty()) add(k);
        all.push_back(v);
    }
    if (options.json) {
        out << all.dump(2) << "\n";
        return 0;
    }
    for (const auto& v : all) {
        out << fmt::format("{}\n  inputs:", v["variant"].get<std::string>());
        for (const auto& in : v["inputs"])
            out << fmt::format(" {}{}{}{}", in["name"].get<std::string>(), in["shape"].get<std::string>(),
                               in["dtype"] == "bool" ? ":bool" : "", in.contains("optional") ? ":optional" : "");
        out << fmt::format("\n  output: {}\n", v["output"]["shape"].get<std::string>());
        for (const auto& k : v["kernels"])
            out << fmt::format("  kernel {:<46} {:<18} {:<13} sizes {:<14} {:<26} {}{}{}\n", k["name"].get<std::string>(),
                               k["result"].get<std::string>(), k["strategy"].get<std::string>(),
                               k["sizes"].get<std::string>(), k["schedule"].get<std::string>(),
                               k["target"].get<std::string>(),
                               k["knobs"].get<std::string>().empty() ? "" : "  " + k["knobs"].get<std::string>(),
                               k["input_types"].get<std::string>().empty()
                                   ? ""
                                   : "  inputs " + k["input_types"].get<std::string>());
    }
    out << "Each (variant, result, storage type, and head width E where the variant's is run-time) runs the first "
           "kernel whose size class holds (Lk: the attention's key length).\n"
           "Schedules: default (generated/kernels.list) or tuned (a record of generated/tuning_records.jsonl, "
           "attnforge tune).\n";
    return 0;
}

}  // namespace attnforge::cli
