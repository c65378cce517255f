#include "search.hpp"

#include "candidate.hpp"
#include "measure.hpp"
#include "validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>

namespace attnforge::tune {

namespace {

using clock = std::chrono::steady_clock;

// Rough compile times of the autoschedulers relative to one of our schedules, to skip one that cannot
// finish within the budget left (Adams2019's search takes minutes on these pipelines).
double expected_compile_seconds(const std::string& strategy, double schedule_compile) {
    if (strategy == "adams2019") return std::max(120.0, 30 * schedule_compile);
    return 3 * schedule_compile;
}

class Search {
public:
    Search(const Problem& p, const Halide::Target& target, const SearchOptions& o, const std::atomic<int>& interrupts,
           const std::function<void(const Progress&)>& observe)
        : problem_(p),
          target_(target),
          o_(o),
          interrupts_(interrupts),
          observe_(observe),
          space_(o.strategies, target.has_feature(Halide::Target::AVX512) ? 16 : 8, p.projections),
          rng_(o.seed),
          validator_(p),
          big_(p) {}

    SearchOutcome run() {
        start_ = clock::now();
        if (o_.resume)
            load_journal();
        else if (!o_.journal.empty())
            std::ofstream(o_.journal, std::ios::trunc);

        // 1. Defaults: the rule's strategy first (its output is the reference at the tuned size).
        std::vector<std::string> order = {o_.rule_strategy};
        for (const auto& s : o_.strategies)
            if (s != o_.rule_strategy) order.push_back(s);
        for (const auto& s : order) {
            SchedulePoint d = space_.default_point(s);
            if (s == o_.rule_strategy)
                for (const auto& [name, value] : o_.rule_knobs)
                    if (d.knobs.count(name)) d.knobs[name] = value;
            const int i = evaluate(d, true);
            if (s == o_.rule_strategy) out_.default_index = i;
        }
        if (!out_.trials[out_.default_index].ok())
            throw std::runtime_error("the default schedule itself failed: " + out_.trials[out_.default_index].status);
        // 2. The previous record's best, 3. the autoschedulers.
        if (o_.previous_best) out_.previous_index = evaluate(*o_.previous_best, false);
        for (const auto& a : o_.autoschedulers) {
            if (stopping()) break;
            const double need = expected_compile_seconds(a, trials_compile_average());
            if (o_.budget_seconds && elapsed() + need > *o_.budget_seconds) {
                Trial t{{a, {}},
                        fmt::format("skipped: needs about {:.0f} s to compile, more than the budget left", need)};
                out_.autoschedulers.push_back(push(std::move(t)));
                continue;
            }
            out_.autoschedulers.push_back(evaluate({a, {}}, false));
        }
        // 4. The search proper.
        while (!stopping() && !out_of_trials() && !out_of_time()) {
            const std::optional<SchedulePoint> next = propose();
            if (!next) break;  // the space is exhausted
            evaluate(*next, false);
        }
        out_.interrupted = interrupts_ > 0;
        final_comparison();
        out_.seconds = elapsed();
        return std::move(out_);
    }

private:
    double elapsed() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
    bool stopping() const { return interrupts_ > 0; }
    int evaluated() const {
        return static_cast<int>(std::count_if(out_.trials.begin(), out_.trials.end(),
                                              [](const Trial& t) { return t.status.rfind("skipped", 0) != 0; }));
    }
    bool out_of_trials() const { return o_.max_trials && evaluated() >= *o_.max_trials; }
    double trials_compile_average() const {
        double sum = 0;
        int n = 0;
        for (const auto& t : out_.trials)
            if (t.compile_s > 0 && !t.point.is_autoscheduler()) sum += t.compile_s, ++n;
        return n ? sum / n : 5.0;
    }
    // Seconds a candidate takes (compile, validate, screen) on average, and the final comparison.
    double per_candidate() const {
        double sum = 0;
        int n = 0;
        for (const auto& t : out_.trials)
            if (!t.point.is_autoscheduler() && t.compile_s > 0) sum += t.compile_s + 4 * t.screen_ms / 1e3, ++n;
        return n ? sum / n : 5.0;
    }
    double final_seconds() const {
        const double ms = out_.trials[out_.default_index].screen_ms;
        const double per_timing =
            std::max(final_round.min_seconds, (final_round.warmup + final_round.repeats) * ms / 1e3);
        return (o_.finalists + 2) * final_rounds * per_timing;
    }
    bool out_of_time() const {
        return o_.budget_seconds && elapsed() + per_candidate() + final_seconds() > *o_.budget_seconds;
    }

    int find(const SchedulePoint& p) const {
        for (int i = 0; i < static_cast<int>(out_.trials.size()); ++i)
            if (out_.trials[i].point == p) return i;
        return -1;
    }

    int push(Trial t) {
        out_.trials.push_back(std::move(t));
        seen_.insert(out_.trials.back().point.key());
        return static_cast<int>(out_.trials.size()) - 1;
    }

    void report(const std::string& phase, int done, const Trial* last) {
        if (!observe_) return;
        Progress p;
        p.phase = phase;
        p.done = done;
        p.planned = o_.max_trials.value_or(0);
        p.elapsed = elapsed();
        if (o_.budget_seconds)
            p.remaining = std::max(0.0, *o_.budget_seconds - p.elapsed);
        else if (o_.max_trials && done > 0 && phase == "search")
            p.remaining = p.elapsed / done * std::max(0, *o_.max_trials - done) + final_seconds();
        p.last = last;
        const int b = fastest_screened();
        p.best = b >= 0 ? &out_.trials[b] : nullptr;
        p.default_ms = out_.default_index >= 0 ? out_.trials[out_.default_index].screen_ms : 0;
        observe_(p);
    }

    // Compiles, validates and screens one point; returns its trial's index. A point already measured
    // (this run or a resumed journal) is not measured again, unless it is a `seed`: one of the candidates
    // every search includes and needs compiled (the default is the reference at the tuned size).
    int evaluate(const SchedulePoint& given, bool seed) {
        const SchedulePoint point = space_.complete(given);
        const int existing = find(point);
        if (existing >= 0 && !seed) return existing;
        Trial t{point};
        try {
            auto c = std::make_shared<Candidate>(Candidate::compile(problem_, point, target_, o_.threads));
            t.compile_s = c->compile_seconds;
            t.status = validator_.check(*c, big_);
            if (t.ok()) {
                t.screen_ms = 1e3 * median_seconds([&] { c->run(big_); }, screening, never_);
                compiled_[point.key()] = c;
            }
        } catch (const Halide::Error& e) {  // not a std::exception
            t.status = "failed: " + first_line(e.what());
        } catch (const std::exception& e) {
            t.status = "failed: " + first_line(e.what());
        }
        int i = existing;
        if (i >= 0)
            out_.trials[i] = std::move(t);
        else
            i = push(std::move(t));
        append_journal(out_.trials[i]);
        report("search", evaluated(), &out_.trials[i]);
        return i;
    }

    int fastest_screened() const {
        int best = -1;
        for (int i = 0; i < static_cast<int>(out_.trials.size()); ++i)
            if (out_.trials[i].ok() && (best < 0 || out_.trials[i].screen_ms < out_.trials[best].screen_ms)) best = i;
        return best;
    }

    std::vector<int> ranked_valid() const {
        std::vector<int> v;
        for (int i = 0; i < static_cast<int>(out_.trials.size()); ++i)
            if (out_.trials[i].ok()) v.push_back(i);
        std::sort(v.begin(), v.end(),
                  [&](int a, int b) { return out_.trials[a].screen_ms < out_.trials[b].screen_ms; });
        return v;
    }

    std::optional<SchedulePoint> propose() {
        std::uniform_real_distribution<double> u(0, 1);
        for (int attempt = 0; attempt < 200; ++attempt) {
            SchedulePoint p;
            const std::vector<int> ranked = ranked_valid();
            std::vector<int> pool;  // parents: the fastest valid candidates of the schedule library
            for (int i : ranked)
                if (!out_.trials[i].point.is_autoscheduler() && pool.size() < 8) pool.push_back(i);
            if (o_.method == "random" || pool.size() < 2 || u(rng_) < 0.2) {
                p = space_.random_point(rng_);
            } else {
                auto tournament = [&] {
                    int best = pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng_)];
                    for (int k = 0; k < 2; ++k) {
                        const int c = pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng_)];
                        if (out_.trials[c].screen_ms < out_.trials[best].screen_ms) best = c;
                    }
                    return out_.trials[best].point;
                };
                p = u(rng_) < 0.3 ? space_.crossover(tournament(), tournament(), rng_)
                                  : space_.mutate(tournament(), rng_);
            }
            if (!seen_.count(p.key())) return p;
        }
        return std::nullopt;
    }

    // The fastest screened candidates, the default and the previous best, timed again in rounds, each
    // round in a rotated order (so that none always runs first after compilation or another's run).
    void final_comparison() {
        std::vector<int> finalists;
        auto add = [&](int i) {
            if (i < 0 || !out_.trials[i].ok()) return;
            for (int f : finalists)
                if (out_.trials[f].point == out_.trials[i].point) return;
            finalists.push_back(i);
        };
        add(out_.default_index);
        // By index, not by point: a record from a build with fewer knobs names a point without the newer
        // ones, which never equals its trial's completed point (the previous record then silently
        // dropped out of the comparison that decides whether it is replaced).
        add(out_.previous_index);
        const std::vector<int> ranked = ranked_valid();
        for (std::size_t r = 0; r < ranked.size() && static_cast<int>(finalists.size()) < o_.finalists + 2; ++r)
            add(ranked[r]);
        out_.finalists = finalists;
        std::map<int, std::vector<double>> rounds;
        bool cut_short = false;
        for (int round = 0; round < final_rounds && !cut_short; ++round) {
            for (std::size_t n = 0; n < finalists.size(); ++n) {
                if (interrupts_ > 1) {
                    cut_short = true;
                    break;
                }
                const int i = finalists[(n + static_cast<std::size_t>(round)) % finalists.size()];
                Trial& t = out_.trials[i];
                std::shared_ptr<Candidate>& c = compiled_[t.point.key()];
                try {
                    if (!c) c = std::make_shared<Candidate>(Candidate::compile(problem_, t.point, target_, o_.threads));
                    rounds[i].push_back(1e3 * median_seconds([&] { c->run(big_); }, final_round, never_));
                } catch (const Halide::Error& e) {  // not a std::exception
                    t.status = "failed: in the final comparison: " + first_line(e.what());
                } catch (const std::exception& e) {
                    t.status = "failed: in the final comparison: " + first_line(e.what());
                }
                report("final", static_cast<int>(round * finalists.size() + n + 1), &t);
            }
        }
        for (int i : finalists) {
            Trial& t = out_.trials[i];
            auto& r = rounds[i];
            if (!t.ok()) continue;
            if (cut_short || r.empty()) {
                t.ms = t.screen_ms;
            } else {
                std::sort(r.begin(), r.end());
                t.ms = r[r.size() / 2];
            }
        }
        int fastest = out_.default_index;
        for (int i : finalists)
            if (out_.trials[i].ok() && out_.trials[i].ms < out_.trials[fastest].ms) fastest = i;
        // Within min_gain of the default is within the noise: the default stays.
        const bool clear_gain = out_.trials[fastest].ms * (1 + o_.min_gain) <= out_.trials[out_.default_index].ms;
        out_.best = clear_gain ? fastest : out_.default_index;
    }

    void append_journal(const Trial& t) {
        if (o_.journal.empty()) return;
        std::ofstream(o_.journal, std::ios::app) << catalogue::to_json(t).dump() << '\n';
    }

    // A resumed run starts with the journal's candidates as measured (the last line of a point wins).
    void load_journal() {
        std::ifstream in(o_.journal);
        std::string line;
        while (std::getline(in, line)) {
            try {
                Trial t = catalogue::trial_from_json(nlohmann::json::parse(line));
                if (t.status.rfind("skipped", 0) == 0) continue;
                t.point = space_.complete(std::move(t.point));
                t.ms = 0;
                if (const int i = find(t.point); i >= 0)
                    out_.trials[i] = t;
                else
                    push(t);
            } catch (const std::exception&) {
                // A line cut short by an interrupted write: that candidate is simply measured again.
            }
        }
    }

    const Problem& problem_;
    Halide::Target target_;
    const SearchOptions& o_;
    const std::atomic<int>& interrupts_;
    std::function<void(const Progress&)> observe_;
    SearchSpace space_;
    std::mt19937_64 rng_;
    Validator validator_;
    Workload big_;
    std::set<std::string> seen_;
    std::map<std::string, std::shared_ptr<Candidate>> compiled_;
    SearchOutcome out_;
    clock::time_point start_;
    const std::atomic<bool> never_{false};  // screening is short: not interruptible
};

}  // namespace

SearchOutcome run_search(const Problem& problem, const Halide::Target& target, const SearchOptions& options,
                         const std::atomic<int>& interrupts, const std::function<void(const Progress&)>& observe) {
    return Search(problem, target, options, interrupts, observe).run();
}

}  // namespace attnforge::tune
