#include "candidate.hpp"

#include <attnforge/runtime/tile_permission.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

namespace attnforge::tune {

namespace {

// Halide's autoscheduler names, by our strategy name; the plugin paths come from the build
// (Halide's imported targets Halide::Mullapudi2016, ...).
const std::map<std::string, std::pair<std::string, std::string>>& autoschedulers() {
    static const std::map<std::string, std::pair<std::string, std::string>> m = {
        {"mullapudi2016", {"Mullapudi2016", ATTNFORGE_PLUGIN_MULLAPUDI2016}},
        {"li2018", {"Li2018", ATTNFORGE_PLUGIN_LI2018}},
        {"adams2019", {"Adams2019", ATTNFORGE_PLUGIN_ADAMS2019}},
    };
    return m;
}

void load_once(const std::string& path) {
    static std::mutex m;
    static std::set<std::string> loaded;
    std::lock_guard lock(m);
    if (loaded.insert(path).second) Halide::load_plugin(path);
}

// Halide's run-time errors come through the JIT user context's handler: kept, then thrown.
struct ErrorCapture : Halide::JITUserContext {
    std::string message;
    ErrorCapture() {
        handlers.custom_error = [](Halide::JITUserContext* ctx, const char* msg) {
            static_cast<ErrorCapture*>(ctx)->message += msg;
        };
    }
};

}  // namespace

std::string autoscheduler_plugin(const std::string& strategy) {
    auto it = autoschedulers().find(strategy);
    if (it == autoschedulers().end()) throw std::invalid_argument("unknown autoscheduler '" + strategy + "'");
    return it->second.second;
}

Candidate Candidate::compile(const Problem& p, const SchedulePoint& point, const Halide::Target& target, int threads) {
    const auto start = std::chrono::steady_clock::now();
    auto gen = Halide::Internal::GeneratorRegistry::create("attnforge_attention", Halide::GeneratorContext(target));
    if (!gen) throw std::logic_error("the attnforge_attention generator is not linked into this program");
    gen->set_generatorparam_value("variant", p.variant);
    gen->set_generatorparam_value("result", p.result);
    gen->set_generatorparam_value("dtype", p.storage);
    gen->set_generatorparam_value("strategy", point.is_autoscheduler()
                                                  ? std::string(catalogue::spec_of(catalogue::Strategy::unscheduled).name)
                                                  : point.strategy);
    for (const auto& [name, value] : point.knobs) gen->set_generatorparam_value(name, std::to_string(value));
    if (p.head_width) gen->set_generatorparam_value("head_width", std::to_string(p.head_width));
    gen->set_generatorparam_value("estimate_batch", std::to_string(p.sizes.batch));
    gen->set_generatorparam_value("estimate_heads", std::to_string(p.sizes.heads));
    gen->set_generatorparam_value("estimate_length", std::to_string(p.key_length));
    Halide::Pipeline pipeline = gen->build_pipeline();
    if (point.is_autoscheduler()) {
        const auto& [name, plugin] = autoschedulers().at(point.strategy);
        load_once(plugin);
        pipeline.apply_autoscheduler(target,
                                     Halide::AutoschedulerParams(name, {{"parallelism", std::to_string(threads)}}));
    }
    // The pipeline's arguments: every input buffer, in the generator's order (the graph's).
    std::vector<Halide::Argument> arguments;
    for (const auto& info : gen->arginfos()) {
        if (info.dir != Halide::Internal::ArgInfoDirection::Input) continue;
        for (const auto& param : gen->input_parameter(info.name))
            arguments.emplace_back(param.name(), Halide::Argument::InputBuffer, param.type(), param.dimensions(),
                                   param.get_argument_estimates());
    }
    Candidate c;
    c.callable_ = pipeline.compile_to_callable(arguments, target);
    c.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return c;
}

void Candidate::run(Workload& w) const {
    runtime::request_amx_tiles();  // a bf16 candidate for a target with AMX multiplies on tiles (once per process)
    ErrorCapture ctx;
    Halide::JITUserContext* context = &ctx;
    w.argv[0] = &context;
    const int status = callable_.call_argv_fast(w.argv.size(), w.argv.data());
    w.argv[0] = nullptr;
    if (status != 0)
        throw std::runtime_error(ctx.message.empty() ? "Halide error " + std::to_string(status) : ctx.message);
}

}  // namespace attnforge::tune
