#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/catalogue/tuning_records.hpp>

#include <cmath>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace attnforge::catalogue {

using ordered = nlohmann::ordered_json;

namespace {
// Times to a useful precision (0.1 µs, 10 ms): shorter lines, same decisions.
double rounded(double v, double scale) {
    return std::round(v * scale) / scale;
}
}  // namespace

nlohmann::ordered_json to_json(const Trial& t) {
    ordered j;
    j["strategy"] = t.point.strategy;
    j["knobs"] = t.point.knob_text();
    j["status"] = t.status;
    j["ms"] = rounded(t.ms, 1e4);
    j["screen_ms"] = rounded(t.screen_ms, 1e4);
    j["compile_s"] = rounded(t.compile_s, 1e2);
    return j;
}

namespace {

template <class T>
T field(const nlohmann::json& j, const char* name) {
    if (!j.is_object() || !j.contains(name)) throw std::runtime_error(std::string("missing field '") + name + "'");
    try {
        return j.at(name).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw std::runtime_error(std::string("field '") + name + "' has the wrong type");
    }
}

}  // namespace

Trial trial_from_json(const nlohmann::json& j) {
    Trial t;
    t.point.strategy = field<std::string>(j, "strategy");
    t.point.knobs = parse_knob_values(field<std::string>(j, "knobs"));
    t.status = field<std::string>(j, "status");
    t.ms = field<double>(j, "ms");
    t.screen_ms = field<double>(j, "screen_ms");
    t.compile_s = field<double>(j, "compile_s");
    return t;
}

nlohmann::ordered_json to_json(const Record& r) {
    ordered j;
    j["id"] = r.id;
    j["time"] = r.time;
    j["variant"] = r.key.variant;
    j["result"] = r.key.result;
    if (r.key.storage != "float32") j["dtype"] = r.key.storage;  // float32 records look as they always did
    if (r.key.head_width) j["E"] = r.key.head_width;
    j["size_bucket"] = r.key.size_bucket;
    j["threads"] = r.key.threads;
    j["target"] = r.key.target;
    j["cpu"] = r.key.cpu;
    j["halide"] = r.key.halide;
    j["attnforge"] = r.key.attnforge;
    j["canonical"] = r.key.canonical;
    j["sizes"] = {{"B", r.sizes.batch}, {"H", r.sizes.heads}, {"Lq", r.sizes.lq}, {"Lk", r.sizes.lk}};
    j["search"] = {{"method", r.search},
                   {"seed", r.seed},
                   {"trials", r.trials},
                   {"seconds", rounded(r.seconds, 10)},
                   {"interrupted", r.interrupted}};
    j["best"] = to_json(r.best);
    j["default"] = to_json(r.default_schedule);
    j["autoschedulers"] = ordered::array();
    for (const auto& t : r.autoschedulers) j["autoschedulers"].push_back(to_json(t));
    j["top"] = ordered::array();
    for (const auto& t : r.top) j["top"].push_back(to_json(t));
    return j;
}

Record record_from_json(const nlohmann::json& j) {
    Record r;
    r.id = field<std::string>(j, "id");
    r.time = field<std::string>(j, "time");
    r.key.variant = field<std::string>(j, "variant");
    r.key.result = field<std::string>(j, "result");
    r.key.size_bucket = field<std::string>(j, "size_bucket");
    r.key.storage = j.contains("dtype") ? field<std::string>(j, "dtype") : "float32";
    r.key.head_width = j.contains("E") ? field<int>(j, "E") : 0;
    if (r.key.head_width < 0 || r.key.head_width > 1024) throw std::runtime_error("E is not a head width");
    if (r.key.storage != "float32" && r.key.storage != "bf16" && r.key.storage != "fp16")
        throw std::runtime_error("dtype '" + r.key.storage + "' is not float32, bf16 or fp16");
    r.key.threads = field<int>(j, "threads");
    r.key.target = field<std::string>(j, "target");
    r.key.cpu = field<std::string>(j, "cpu");
    r.key.halide = field<std::string>(j, "halide");
    r.key.attnforge = field<std::string>(j, "attnforge");
    r.key.canonical = field<std::string>(j, "canonical");
    const auto sizes = field<nlohmann::json>(j, "sizes");
    r.sizes = {field<std::int64_t>(sizes, "B"), field<std::int64_t>(sizes, "H"), field<std::int64_t>(sizes, "Lq"),
               field<std::int64_t>(sizes, "Lk"), r.key.head_width ? r.key.head_width : 64};
    const auto search = field<nlohmann::json>(j, "search");
    r.search = field<std::string>(search, "method");
    r.seed = field<std::uint64_t>(search, "seed");
    r.trials = field<int>(search, "trials");
    r.seconds = field<double>(search, "seconds");
    r.interrupted = field<bool>(search, "interrupted");
    r.best = trial_from_json(field<nlohmann::json>(j, "best"));
    r.default_schedule = trial_from_json(field<nlohmann::json>(j, "default"));
    for (const auto& t : field<nlohmann::json>(j, "autoschedulers")) r.autoschedulers.push_back(trial_from_json(t));
    for (const auto& t : field<nlohmann::json>(j, "top")) r.top.push_back(trial_from_json(t));
    if (!r.best.ok()) throw std::runtime_error("its best schedule is not valid ('" + r.best.status + "')");
    // What becomes part of a kernel line, its name and the registry's strings.
    static const std::regex word("[A-Za-z0-9_-]+");
    if (!std::regex_match(r.id, word) || !std::regex_match(r.key.variant, word) ||
        (r.key.result != "output" && r.key.result != "attention_weights"))
        throw std::runtime_error("id, variant or result has characters a kernel line cannot hold");
    if (!parse_size_class(r.key.size_bucket) || r.key.size_bucket == "any")
        throw std::runtime_error("size bucket '" + r.key.size_bucket + "' is not Lk<=N or A<Lk<=B");
    const std::string& s = r.best.point.strategy;
    const StrategySpec* strategy = find_strategy(s);
    if (!(strategy && strategy->tuned) && !is_autoscheduler(s))
        throw std::runtime_error("unknown strategy '" + s + "' (expected " + strategy_names(true) + " or " +
                                 autoscheduler_names() + ")");
    return r;
}

Database read_database(const std::string& path) {
    Database db;
    std::ifstream in(path);
    if (!in) return db;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            db.records.push_back(record_from_json(nlohmann::json::parse(line)));
        } catch (const std::exception& e) {
            db.warnings.push_back(path + ":" + std::to_string(number) + ": unreadable record, ignored: " + e.what());
        }
    }
    return db;
}

void append_record(const std::string& path, const Record& r) {
    std::ofstream out(path, std::ios::app);
    out << to_json(r).dump() << '\n';
    out.flush();
    if (!out) throw std::runtime_error("cannot append to the tuning records '" + path + "'");
}

const Record* newest_matching(const Database& db, const RecordKey& key) {
    const Record* found = nullptr;
    for (const auto& r : db.records)
        if (r.key == key) found = &r;
    return found;
}

std::string mismatch(const RecordKey& r, const RecordKey& here) {
    if (r.canonical != here.canonical) return "the variant's definition changed since it was tuned";
    if (r.target != here.target) return "tuned for target " + r.target + ", this machine is " + here.target;
    if (r.halide != here.halide) return "tuned with Halide " + r.halide + ", this build has " + here.halide;
    if (r.attnforge != here.attnforge) return "tuned with attnforge " + r.attnforge + ", this is " + here.attnforge;
    if (r.cpu != here.cpu) return "tuned on '" + r.cpu + "', this CPU is '" + here.cpu + "'";
    if (r.threads != here.threads)
        return "tuned for " + std::to_string(r.threads) + " threads, not " + std::to_string(here.threads);
    return "";
}

}  // namespace attnforge::catalogue
