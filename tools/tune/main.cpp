// attnforge-tune: `attnforge tune` (the attnforge command forwards to this program, which links the
// Halide compiler; the attnforge command and the kernels do not). Argument parsing, the machine's
// key, the records, the table; the search is search.cpp.
#include "cli_checks.hpp"
#include "machine.hpp"
#include "problem.hpp"
#include "progress.hpp"
#include "search.hpp"
#include <attnforge/catalogue/kernel_list.hpp>
#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/catalogue/strategies.hpp>
#include <attnforge/errors.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fma_peak.hpp>
#include <iostream>
#include <optional>
#include <thread>

namespace {

namespace tune = attnforge::tune;
namespace catalogue = attnforge::catalogue;
namespace fs = std::filesystem;

std::atomic<int> interrupts{0};
extern "C" void on_interrupt(int) {
    interrupts.fetch_add(1);
}

struct Options {
    std::string variant, result = "output";
    std::int64_t batch = 1, heads = 8, length = 512, head_width = 64;
    std::optional<std::int64_t> lq, lk;
    int threads = 0;
    std::optional<double> budget;
    std::optional<int> trials;
    std::string strategy;  // empty: every strategy of the result
    std::string dtype = "float32";
    std::string search = "evolutionary";
    std::uint64_t seed = 1;
    bool resume = false;
    std::vector<std::string> autoschedulers = {"mullapudi2016", "li2018", "adams2019"};
    bool no_autoschedulers = false;
    std::string db = ATTNFORGE_SOURCE_DIR "/generated/tuning_records.jsonl";
    std::string kernel_list = ATTNFORGE_SOURCE_DIR "/generated/kernels.list";
    std::string journal;
    bool no_record = false;
    int top = 8;
};

std::string default_journal(const tune::Problem& p, const tune::RecordKey& key) {
    const char* cache = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    const fs::path dir = cache && *cache ? fs::path(cache) / "attnforge/tune"
                         : home && *home ? fs::path(home) / ".cache/attnforge/tune"
                                         : fs::temp_directory_path() / "attnforge-tune";
    fs::create_directories(dir);
    std::string name =
        fmt::format("{}-{}{}-B{}-H{}-Lq{}-Lk{}-t{}", p.variant, p.result, p.storage == "float32" ? "" : "-" + p.storage,
                    p.asked.batch, p.asked.heads, p.asked.lq, p.asked.lk, key.threads);
    return (dir / (name + ".jsonl")).string();
}

std::string schedule_text(const tune::SchedulePoint& p) {
    return p.knobs.empty() ? p.strategy : p.strategy + " " + p.knob_text();
}

void print_table(const tune::Problem& problem, const tune::SearchOutcome& out, const tune::Record& record,
                 double peak_gflops, int top) {
    const double default_ms = out.trials[out.default_index].ms;
    fmt::print("\n{:>4}  {:>9}  {:>8}  {:>6}  {:>10}  {}\n", "rank", "ms", "GFLOP/s", "% peak", "vs default",
               "schedule");
    auto row = [&](const std::string& rank, const tune::Trial& t) {
        const double gflops = problem.flops / (t.ms / 1e3) / 1e9;
        fmt::print("{:>4}  {:>9.3f}  {:>8.1f}  {:>6.1f}  {:>9.2f}x  {}\n", rank, t.ms, gflops,
                   100 * gflops / peak_gflops, default_ms / t.ms, schedule_text(t.point));
    };
    const tune::Trial* previous = out.previous_index >= 0 ? &out.trials[out.previous_index] : nullptr;
    int rank = 0;
    for (const auto& t : record.top)
        if (rank < top)
            row(std::to_string(++rank) + (t.point == record.default_schedule.point ? "*" : "") +
                    (previous && t.point == previous->point ? "r" : ""),
                t);
    fmt::print("(* the default: the kernel list's schedule for these sizes{})\n",
               previous ? "; r: the previous record's, which the build runs today" : ", which the build runs today");
    for (int i : out.autoschedulers) {  // those not in the table: where they stand
        const tune::Trial& t = out.trials[i];
        if (std::find(out.finalists.begin(), out.finalists.end(), i) != out.finalists.end()) continue;
        if (t.ok())
            fmt::print("      {:<13} {:.3f} ms at screening, {:.2f}x the default\n", t.point.strategy, t.screen_ms,
                       out.trials[out.default_index].screen_ms / t.screen_ms);
        else
            fmt::print("      {:<13} {}\n", t.point.strategy, t.status);
    }
    int invalid = 0, failed = 0;
    std::string example;
    for (const auto& t : out.trials) {
        if (t.status.rfind("invalid", 0) == 0) ++invalid;
        if (t.status.rfind("failed", 0) == 0) ++failed;
        if (!t.ok() && example.empty() && !t.point.is_autoscheduler())
            example = schedule_text(t.point) + ": " + t.status;
    }
    fmt::print("\n{} candidates in {:.0f} s: {} valid, {} rejected by validation, {} failed to compile or run{}\n",
               out.trials.size(), out.seconds, out.trials.size() - invalid - failed, invalid, failed,
               out.interrupted ? " (interrupted: the results so far)" : "");
    if (!example.empty()) fmt::print("  e.g. {}\n", example);
}

int tune_main(const Options& o) {
    const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);  // read by Halide's JIT runtime at its first call

    tune::ProblemSizes sizes{o.batch, o.heads, o.lq.value_or(o.length), o.lk.value_or(o.length), o.head_width};
    const tune::Problem problem = tune::make_problem(o.variant, o.result, sizes, o.dtype);
    const tune::RecordKey key = tune::machine_key(problem, threads);

    // Records: the newest matching one seeds the search; others of the same kernel say why they do not apply.
    const tune::Database db = catalogue::read_database(o.db);
    for (const auto& w : db.warnings) fmt::print(stderr, "attnforge tune: warning: {}\n", w);
    const tune::Record* previous = catalogue::newest_matching(db, key);
    for (const auto& r : db.records)
        if (r.key.variant == key.variant && r.key.result == key.result && r.key.size_bucket == key.size_bucket &&
            r.key.head_width == key.head_width && !(r.key == key))
            fmt::print(stderr, "attnforge tune: note: record {} does not apply here: {}\n", r.id,
                       catalogue::mismatch(r.key, key));

    tune::SearchOptions so;
    so.threads = threads;
    so.budget_seconds = o.budget;
    so.max_trials = o.trials;
    if (!o.budget && !o.trials) so.budget_seconds = 120;
    so.strategies = o.strategy.empty() ? catalogue::general_strategies(o.result) : std::vector{o.strategy};
    const auto lines = catalogue::read_kernel_list(o.kernel_list);
    const auto rule = catalogue::rule_choice(lines, o.variant, o.result, problem.key_length, problem.asked.lq, o.dtype,
                                             "", problem.head_width);
    const catalogue::StrategySpec* rule_strategy = rule ? catalogue::find_strategy(rule->strategy) : nullptr;
    // Where the rule picks a strategy of a bounded query length (decode), that strategy alone is tuned (the
    // others serve the variant's longer query blocks).
    if (rule_strategy && catalogue::bounds_queries(rule_strategy->sizes) && o.strategy.empty())
        so.strategies = {rule->strategy};
    if (rule_strategy && rule_strategy->tuned) {
        so.rule_strategy = rule->strategy;
        so.rule_knobs = rule->knob_values();
        // block_mask adds the pre-pass's input, which candidates compiled just in time do not get: the
        // tuner tunes the kernel without it, and the catalogue gives a tuned kernel the knob back.
        so.rule_knobs.erase("block_mask");
    } else {
        so.rule_strategy = so.strategies.front();
    }
    so.autoschedulers = o.no_autoschedulers ? std::vector<std::string>{} : o.autoschedulers;
    so.seed = o.seed;
    so.method = o.search;
    if (previous) so.previous_best = previous->best.point;
    so.journal = o.journal.empty() ? default_journal(problem, key) : o.journal;
    so.resume = o.resume;

    const Halide::Target target = Halide::get_jit_target_from_environment();
    fmt::print("attnforge tune {} ({}{}): {}, {} threads, {:.3f} GFLOP per call\n", o.variant, o.result,
               o.dtype == "float32" ? "" : ", " + o.dtype + " storage", problem.describe(), threads,
               problem.flops / 1e9);
    fmt::print(
        "  target {}\n  size bucket {}, default: {} (the kernel list's rule for Lk={}), search: {}, seed {}, {}\n",
        target.to_string(), key.size_bucket, so.rule_strategy, problem.key_length, so.method, so.seed,
        so.max_trials ? fmt::format("{} trials", *so.max_trials) : fmt::format("budget {:.0f} s", *so.budget_seconds));
    if (previous)
        fmt::print("  starting from record {} ({}): {}\n", previous->id, previous->time,
                   schedule_text(previous->best.point));
    fmt::print("  journal {}{}\n", so.journal, o.resume ? " (resumed)" : "");

    std::signal(SIGINT, on_interrupt);
    tune::ProgressView view(stderr);
    tune::SearchOutcome out =
        tune::run_search(problem, target, so, interrupts, [&](const tune::Progress& p) { view(p); });
    view.finish();
    std::signal(SIGINT, SIG_DFL);

    tune::Record r;
    r.id = tune::new_record_id();
    r.time = tune::utc_now();
    r.key = key;
    r.sizes = sizes;
    r.search = so.method;
    r.seed = so.seed;
    r.trials = static_cast<int>(out.trials.size());
    r.seconds = out.seconds;
    r.interrupted = out.interrupted;
    r.best = out.trials[out.best];
    r.default_schedule = out.trials[out.default_index];
    for (int i : out.autoschedulers) r.autoschedulers.push_back(out.trials[i]);
    std::vector<int> ranked;
    for (int i : out.finalists)
        if (out.trials[i].ok()) ranked.push_back(i);
    std::sort(ranked.begin(), ranked.end(), [&](int a, int b) { return out.trials[a].ms < out.trials[b].ms; });
    for (int i : ranked) r.top.push_back(out.trials[i]);

    // bf16 kernels against the machine's bf16 peak where it has one (attnforge bench does the same).
    const attnforge::cli::Peak fma = attnforge::cli::measure_fma_peak(threads);
    const std::optional<attnforge::cli::Peak> dot =
        o.dtype == "bf16" ? attnforge::cli::measure_bf16_peak(threads) : std::nullopt;
    const double peak = dot ? dot->gflops : fma.gflops;
    print_table(problem, out, r, peak, o.top);
    const double speedup = r.default_schedule.ms / r.best.ms;
    fmt::print("\nbest: {} — {:.3f} ms, {:.2f}x the default ({:.3f} ms); {} peak {:.0f} GFLOP/s on {} threads\n",
               schedule_text(r.best.point), r.best.ms, speedup, r.default_schedule.ms,
               dot ? std::string("bf16 (") + dot->isa + ")" : std::string("FMA"), peak, threads);
    if (o.no_record) {
        fmt::print("not recorded (--no-record)\n");
    } else {
        catalogue::append_record(o.db, r);
        fmt::print(
            "recorded {} in {}\nthe next build uses it for {} ({}, {}): rebuild, then `attnforge list` shows it\n",
            r.id, o.db, o.variant, o.result, key.size_bucket);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{
        "attnforge tune: search schedules of a variant for given sizes on this machine and record the fastest for the "
        "next build.\n"
        "Every candidate is compiled just in time with Halide and validated against the reference interpreter on a "
        "small\n"
        "size (the size bucket's smallest key length) and against the default schedule at the tuned size before it is "
        "timed.\n"
        "Measurement: inputs and output allocated once, on --threads threads; screening: 1 warm-up call, median of 3;\n"
        "final comparison of the best candidates, the default and the previous record: 5 interleaved rounds of\n"
        "(2 warm-up calls, then calls until 5 and 0.25 s), median of the rounds' medians; the fastest replaces the\n"
        "default only when at least 2% faster. Ctrl-C stops the search and\n"
        "keeps everything measured (a second Ctrl-C also cuts the final comparison short); --resume continues it.",
        "attnforge tune"};
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return std::string("attnforge tune: ") + e.what() + " (see attnforge tune --help)\n";
    });
    bool help_knobs = false;
    app.add_option("variant", o.variant, "Variant name (see `attnforge list`)");
    app.add_option("--result", o.result, "output or attention_weights")
        ->check(CLI::IsMember({"output", "attention_weights"}));
    app.add_option("--batch", o.batch, "B")->check(attnforge::cli::positive);
    app.add_option("--heads", o.heads, "H, for variants with a run-time head count")->check(attnforge::cli::positive);
    app.add_option("--head-width", o.head_width,
                   "E, for variants with a run-time head width (default 64); the tuned kernel serves that E")
        ->check(attnforge::cli::positive);
    app.add_option("--length", o.length, "Every sequence length (L)")->check(attnforge::cli::positive);
    app.add_option("--lq", o.lq, "Query length (overrides --length)")->check(attnforge::cli::positive);
    app.add_option("--lk", o.lk, "Key length (overrides --length)")->check(attnforge::cli::positive);
    app.add_option("--threads", o.threads,
                   "Threads the kernel runs on (default: one per core); part of the record's key")
        ->check(attnforge::cli::positive);
    auto* budget =
        app.add_option("--budget", o.budget, "Seconds for the whole run (default 120 when --trials is not given)")
            ->check(attnforge::cli::positive);
    app.add_option("--trials", o.trials, "Candidates to evaluate instead of a time budget")
        ->check(attnforge::cli::positive)
        ->excludes(budget);
    app.add_option("--dtype", o.dtype, "The kernels' storage type: float32 (default), bf16 or fp16")
        ->check(CLI::IsMember({"float32", "bf16", "fp16"}));
    app.add_option("--strategy", o.strategy, "Search one schedule strategy only")
        ->check(CLI::IsMember(catalogue::tuned_strategy_names()));
    app.add_option("--search", o.search, "evolutionary (default) or random")
        ->check(CLI::IsMember({"evolutionary", "random"}));
    app.add_option("--seed", o.seed, "Seed of the search: the same seed proposes the same candidates");
    app.add_flag("--resume", o.resume, "Take the candidates already in the journal as measured");
    app.add_option("--autoschedulers", o.autoschedulers, "Halide autoschedulers among the candidates")
        ->delimiter(',')
        ->check(CLI::IsMember({"mullapudi2016", "li2018", "adams2019"}));
    app.add_flag("--no-autoschedulers", o.no_autoschedulers, "No autoscheduler candidates");
    app.add_option("--db", o.db, "Tuning records (default: the source tree's generated/tuning_records.jsonl)");
    app.add_option("--kernel-list", o.kernel_list, "The kernel list whose rule gives the default schedule");
    app.add_option("--journal", o.journal, "Where every candidate is logged (default: ~/.cache/attnforge/tune/)");
    app.add_flag("--no-record", o.no_record, "Do not append a record");
    app.add_option("--top", o.top, "Rows of the final table")->check(attnforge::cli::positive);
    app.add_flag("--help-knobs", help_knobs, "Print the search space: every knob and its values");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int status = app.exit(e);
        return status == 0 ? 0 : 2;
    }
    if (help_knobs) {
        // The table for a 16-lane (AVX-512) target, whatever this machine is: the same text everywhere.
        fmt::print("{}", tune::SearchSpace(catalogue::tuned_strategy_names(), 16).describe());
        fmt::print("- autoschedulers (no knobs): {}, on the unscheduled pipeline\n", catalogue::autoscheduler_names());
        return 0;
    }
    if (o.variant.empty()) {
        fmt::print(stderr, "attnforge tune: a variant is required (see attnforge tune --help)\n");
        return 2;
    }
    try {
        return tune_main(o);
    } catch (const attnforge::input_error& e) {
        fmt::print(stderr, "attnforge tune: {}\n", e.what());
        return 2;
    } catch (const Halide::Error& e) {  // not a std::exception
        fmt::print(stderr, "attnforge tune: Halide error: {}\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "attnforge tune: error: {}\n", e.what());
        return 1;
    }
}
