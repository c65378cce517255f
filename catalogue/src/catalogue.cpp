#include <attnforge/catalogue/catalogue.hpp>
#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/catalogue/strategies.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace attnforge::catalogue {

BuildFacts facts_from_probe(const std::string& probe_json, std::string halide, std::string attnforge, int threads) {
    BuildFacts f;
    try {
        const auto j = nlohmann::json::parse(probe_json);
        f.target = j.at("target").get<std::string>();
        f.cpu = j.at("cpu").get<std::string>();
        for (const auto& [name, text] : j.at("variants").items()) f.canonical[name] = text.get<std::string>();
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("the probe's answer is not {target, cpu, variants}: ") + e.what());
    }
    f.halide = std::move(halide);
    f.attnforge = std::move(attnforge);
    f.threads = threads;
    return f;
}

TunedLines select_tuned_lines(const Database& db, const BuildFacts& here) {
    TunedLines out;
    out.warnings = db.warnings;
    std::vector<std::string> order;            // keys in the order of their first applicable record
    std::map<std::string, KernelLine> newest;  // key -> the line of its newest applicable record
    for (const Record& r : db.records) {
        const std::string what = "record " + r.id + " (" + r.key.variant + " " + r.key.result + " " +
                                 (r.key.storage == "float32" ? "" : r.key.storage + " ") + r.key.size_bucket + ")";
        const auto canonical = here.canonical.find(r.key.variant);
        std::string why;
        if (canonical == here.canonical.end()) {
            why = "no built-in variant '" + r.key.variant + "'";
        } else {
            const RecordKey key{r.key.variant,  r.key.result,  canonical->second, r.key.size_bucket,
                                here.threads,   here.target,   here.cpu,          here.halide,
                                here.attnforge, r.key.storage, r.key.head_width};
            why = mismatch(r.key, key);
        }
        if (!why.empty()) {
            out.notes.push_back(what + " ignored: " + why);
            continue;
        }
        const std::string key = r.key.variant + "/" + r.key.result + "/" + r.key.storage + "/" + r.key.size_bucket +
                                "/" + std::to_string(r.key.head_width);
        if (!newest.contains(key)) order.push_back(key);
        KernelLine line{
            r.key.variant, r.key.result, r.best.point.strategy, r.key.size_bucket, {}, r.id, "tuning record " + r.id,
            r.key.storage, "",           r.key.head_width};
        for (const auto& [name, value] : r.best.point.knobs) line.knobs.push_back(name + "=" + std::to_string(value));
        if (r.best.point.is_autoscheduler()) {
            // An autoscheduler plans for sizes: the ones it was tuned at.
            line.knobs.push_back("estimate_batch=" + std::to_string(r.sizes.batch));
            line.knobs.push_back("estimate_heads=" + std::to_string(r.sizes.heads));
            line.knobs.push_back("estimate_length=" + std::to_string(r.sizes.lk));
        }
        newest[key] = std::move(line);
    }
    for (const auto& key : order) out.lines.push_back(newest.at(key));
    return out;
}

std::string Kernel::schedule() const {
    return line.record.empty() ? "default" : "tuned, record " + line.record;
}

Catalogue assemble(const std::vector<KernelLine>& listed, const std::vector<KernelLine>& tuned) {
    // The kernels one rule chooses among: a (variant, result, storage type).
    auto pair_of = [](const KernelLine& l) {
        return l.variant + "/" + l.result + "/" + l.storage + "/" + l.input_types;
    };
    std::set<std::string> block_masked, listed_pairs;
    for (const auto& l : listed) {
        listed_pairs.insert(pair_of(l));
        if (l.has_knob("block_mask=1")) block_masked.insert(pair_of(l));  // its strategy takes live blocks
    }
    Catalogue c;
    std::set<std::string> placed;  // (variant, result) pairs whose tuned lines are in
    auto add = [&](KernelLine line) {
        Kernel k{std::move(line), "", false};
        k.name = kernel_name(k.line);
        k.prepass = k.line.has_knob("block_mask=1");
        for (const auto& other : c.kernels)
            if (other.name == k.name)
                throw std::runtime_error(k.line.where + ": kernel " + k.name + " is made twice (also by " +
                                         other.line.where + ")");
        c.kernels.push_back(std::move(k));
    };
    // The query bound of a pair's first listed line of a strategy whose kernels serve a bound of Lq (decode:
    // "Lq<=16" of "Lq<=16" or "Lq<=16,Lk>N"): a tuned kernel of it, whose record names a bucket of Lk only,
    // serves those queries only, as the listed one does (else it would go first for every Lq of its bucket,
    // prefill included). No such listed line: the strategy's own class (the strategy table).
    auto bounded_queries = [&](const std::string& pair, const StrategySpec& strategy) -> std::string {
        for (const auto& l : listed) {
            if (pair_of(l) != pair || l.strategy != strategy.name) continue;
            if (auto bound = query_bound(l.sizes)) return *bound;
        }
        return std::string(strategy.sizes);
    };
    for (const auto& l : listed) {
        if (placed.insert(pair_of(l)).second)
            for (auto t : tuned)
                if (pair_of(t) == pair_of(l)) {
                    const StrategySpec* strategy = find_strategy(t.strategy);  // null: an autoscheduler
                    if (strategy && strategy->block_mask && block_masked.contains(pair_of(t)) &&
                        !t.has_knob("block_mask=1"))
                        t.knobs.push_back("block_mask=1");
                    if (strategy && bounds_queries(strategy->sizes) && !bounds_queries(t.sizes))
                        t.sizes = bounded_queries(pair_of(t), *strategy) + "," + t.sizes;
                    add(std::move(t));
                }
        add(l);
    }
    for (const auto& t : tuned)
        if (!listed_pairs.contains(pair_of(t)))
            c.notes.push_back("tuned kernel '" + t.variant + " " + t.result + " " + t.strategy + " " + t.sizes + " " +
                              t.knob_text() + "' has no line of its variant and result in the kernel list: not built");
    return c;
}

}  // namespace attnforge::catalogue
