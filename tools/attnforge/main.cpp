// attnforge: the command line. Argument parsing only (CLI11); the commands live in the attnforge_cli
// library (commands.hpp). Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.
#include "commands.hpp"

#include "cli_checks.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

// `attnforge tune ...` runs attnforge-tune (tools/tune), installed next to this program: the tuner
// links the Halide compiler, which the other commands (and the kernels) must not need.
int forward_to_tuner(int argc, char** argv) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto tuner = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "attnforge-tune";
    std::vector<char*> args = {const_cast<char*>("attnforge tune")};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    execv(tuner.c_str(), args.data());
    std::cerr << "attnforge: tune needs " << tuner.string()
              << " (built with the project, not in sanitizer builds): " << std::strerror(errno) << "\n";
    return 1;
}

// Large tensors (inputs, KV caches, outputs) in transparent huge pages, as NumPy allocates its arrays
// (and so every peer of bench/run): glibc's malloc does so under the tunable glibc.malloc.hugetlb=1, which
// it reads at start-up, so the program starts itself once more with it set. A decode cache read through
// 4 KiB pages streams at 22 GB/s on one Zen 4 core, through 2 MiB pages at 28-31 GB/s: the hardware
// prefetcher stops at every 4 KiB page (docs/performance.md, decode). Where THP is off ("never") or the
// allocator is not glibc's (sanitizer builds), nothing changes; if the restart fails, the program goes on.
void restart_with_huge_page_malloc(char** argv) {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables != nullptr && std::string_view(tunables).find("glibc.malloc.hugetlb") != std::string_view::npos)
        return;
    const std::string set = (tunables != nullptr && *tunables != '\0' ? std::string(tunables) + ":" : std::string()) +
                            "glibc.malloc.hugetlb=1";
    if (setenv("GLIBC_TUNABLES", set.c_str(), 1) != 0) return;
    execv("/proc/self/exe", argv);
}

}  // namespace

int main(int argc, char** argv) {
    restart_with_huge_page_malloc(argv);
    if (argc > 1 && std::string_view(argv[1]) == "tune") return forward_to_tuner(argc, argv);
    CLI::App app{"attnforge: fast transformer attention on CPUs, generated ahead of time from a DSL"};
    app.require_subcommand(1);
    // One line on stderr for bad usage (docs/contract.md §3).
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return std::string("attnforge: ") + e.what() + " (see attnforge --help)\n";
    });

    attnforge::cli::ListOptions list;
    auto* list_cmd = app.add_subcommand("list", "List the variants, their inputs and output, and their kernels");
    list_cmd->add_flag("--json", list.json, "Machine-readable output");

    attnforge::cli::RunOptions run;
    auto* run_cmd = app.add_subcommand("run", "Run a variant on .npy inputs");
    run_cmd->add_option("variant", run.variant, "Variant name (see `attnforge list`)")->required();
    run_cmd->add_option("--input", run.inputs, "NAME=FILE.npy, once per input of the variant")->required();
    run_cmd->add_option("--output", run.output, "Where to write the output (.npy, float32)")->required();
    run_cmd->add_option("--engine", run.engine, "kernel (generated code) or interpreter (float64 reference)")
        ->check(CLI::IsMember({"kernel", "interpreter"}));
    run_cmd->add_option("--attention-weights", run.attention_weights,
                        "Also write the softmax probabilities (B, Hq, Lq, Lk) to this .npy file");
    run_cmd->add_option("--logsumexp", run.logsumexp,
                        "Also write the log-sum-exp of the softmax rows (B, Hq, Lq; -inf for fully masked rows) to "
                        "this .npy file");
    run_cmd->add_option("--threads", run.threads, "Threads for this run (default: one per core)")
        ->check(attnforge::cli::positive);
    run_cmd->add_option("--dtype", run.dtype,
                        "Storage type of the kernels: float32 (default), bf16 (float32 inputs rounded to nearest "
                        "even) or fp16 ('<f2' inputs, or float32 rounded); results are written as float32")
        ->check(CLI::IsMember({"float32", "bf16", "fp16"}));

    attnforge::cli::BenchOptions bench;
    auto* bench_cmd = app.add_subcommand(
        "bench",
        "Time a variant's kernels and the interpreter; report ms, GFLOP/s and % of the FMA peak, GB/s and % of the "
        "read bandwidth (the bytes of inputs and output over the time), both measured in the same run. Protocol: inputs and output allocated once, 2 warm-up calls, then calls until --repeats and "
        "--min-seconds (0.5 s), median reported; a pass of the read-bandwidth probe after every 50 ms of calls, the "
        "% of bandwidth against their median.");
    bench_cmd->add_option("variant", bench.variant, "Variant name")->required();
    bench_cmd->add_option("--batch", bench.batch, "B")->check(attnforge::cli::positive);
    bench_cmd->add_option("--heads", bench.heads, "H, for variants with a run-time head count")
        ->check(attnforge::cli::positive);
    bench_cmd
        ->add_option("--kv-heads", bench.kv_heads, "Hkv, for variants with a run-time Hkv (a divisor of H; default H)")
        ->check(attnforge::cli::positive);
    bench_cmd->add_option("--head-width", bench.head_width, "E, for variants with a run-time head width (default 64)")
        ->check(attnforge::cli::positive);
    bench_cmd->add_option("--length", bench.length, "Every sequence length (L)")->check(attnforge::cli::positive);
    bench_cmd->add_option("--lq", bench.lq, "Query length Lq (overrides --length)")->check(attnforge::cli::positive);
    bench_cmd->add_option("--lk", bench.lk, "Key length Lk (overrides --length)")->check(attnforge::cli::positive);
    bench_cmd->add_option("--threads", bench.threads, "Thread counts to measure, e.g. 1,2")
        ->delimiter(',')
        ->check(attnforge::cli::positive);
    bench_cmd->add_option("--strategy", bench.strategy, "Only kernels of this strategy");
    bench_cmd->add_flag("--chosen-only", bench.chosen_only, "Only the kernel the rule picks for these sizes");
    bench_cmd->add_option("--repeats", bench.min_repeats, "Minimum timed calls per kernel")->check(attnforge::cli::positive);
    bench_cmd->add_option("--min-seconds", bench.min_seconds, "Minimum timing time per kernel (default 0.5)")
        ->check(attnforge::cli::non_negative);
    bench_cmd->add_flag("!--no-interpreter", bench.interpreter, "Skip the interpreter");
    bench_cmd->add_flag("--json", bench.json, "Also print the rows as JSON");
    bench_cmd->add_option("--input", bench.inputs,
                          "NAME=FILE.npy: this input instead of a synthetic one, of the shape the sizes give "
                          "(repeatable; e.g. the document ids a peer is timed with)");
    bench_cmd->add_option("--dtype", bench.dtype, "Storage type of the kernels timed: float32 (default), bf16, fp16")
        ->check(CLI::IsMember({"float32", "bf16", "fp16"}));
    bench_cmd->add_option("--input-dtype", bench.input_dtypes,
                          "NAME=TYPE: time the kernels that take this input in a type of its own (repeatable; "
                          "e.g. --input-dtype k=bf16 --input-dtype v=bf16 for a float32 query over a bf16 cache)");

    attnforge::cli::QuantizeOptions quantize;
    auto* quantize_cmd = app.add_subcommand(
        "quantize",
        "Write new tokens' keys or values (B, Hkv, Lnew, E) into a quantized cache: into the cache its files hold "
        "where "
        "--codes exists, else into a new one of --lmax slots. With --zero, uint8 codes by token (decode_u8's k, "
        "k_scale, k_zero): scale = (max - min) / 255, zero = -min / scale, code = round((x - min) / scale). Without, "
        "int8 codes with a scale per token or per --group channels (decode_i8's k, k_scale; decode_i8_g32 with "
        "--group 32): scale = max|x| / 127, code = round(x / scale). With --zero and --open-block, uint8 keys by "
        "channel of blocks of 128 tokens (decode_u8_kc128's k, k_scale, k_zero): the same rule down each channel of "
        "a block, the block being filled quantized again from its tokens kept in --open-block");
    quantize_cmd->add_option("--values", quantize.values, "The new tokens, (B, Hkv, Lnew, E) .npy")->required();
    quantize_cmd->add_option("--codes", quantize.codes, "The cache's codes, (B, Hkv, Lmax, E) uint8 or int8 .npy")
        ->required();
    quantize_cmd
        ->add_option("--scale", quantize.scale, "Its scales, (B, Hkv, Lmax) or (B, Hkv, Lmax, E/G) float32 .npy")
        ->required();
    quantize_cmd->add_option("--zero", quantize.zero, "Its zero points, (B, Hkv, Lmax) float32 .npy: a uint8 cache");
    quantize_cmd->add_option("--group", quantize.group, "A new int8 cache's scale per G channels (default: per token)")
        ->check(attnforge::cli::positive);
    quantize_cmd->add_option("--kv-length", quantize.kv_length,
                             "(B) int32 .npy: the slot each entry's first new token goes to (default 0); not changed");
    quantize_cmd->add_option("--lmax", quantize.lmax, "Slots of a new cache (default: Lnew)")
        ->check(attnforge::cli::positive);
    quantize_cmd->add_option("--open-block", quantize.open_block,
                             "Keys by channel: the block being filled, (B, Hkv, 128, E) float32 .npy, read with an "
                             "existing cache and written with it (keep it with the cache)");

    attnforge::cli::VizOptions viz;
    auto* viz_cmd = app.add_subcommand(
        "viz",
        "Draw a variant's attention weights as a PNG heatmap (one panel per head, colour bar, optional token "
        "labels) and print each query row's entropy and top-k keys");
    viz_cmd->add_option("variant", viz.variant, "Variant name (see `attnforge list`)")->required();
    viz_cmd->add_option("--input", viz.inputs, "NAME=FILE.npy, once per input of the variant")->required();
    viz_cmd->add_option("--png", viz.png, "Where to write the heatmap (.png)")->required();
    viz_cmd->add_option("--batch", viz.batch, "Which batch entry to draw (default 0)")->check(attnforge::cli::non_negative);
    viz_cmd->add_option("--head", viz.head, "Only this head (default: every head, one panel each)")
        ->check(attnforge::cli::non_negative);
    viz_cmd->add_option("--tokens", viz.tokens,
                        "Labels for queries and keys (self-attention): a text file, one token per line");
    viz_cmd->add_option("--query-tokens", viz.query_tokens, "Labels for the queries, one per line");
    viz_cmd->add_option("--key-tokens", viz.key_tokens, "Labels for the keys, one per line");
    viz_cmd->add_option("--top-k", viz.top_k, "Keys listed per query row (default 3)")->check(attnforge::cli::positive);
    viz_cmd->add_option("--max-rows", viz.max_rows, "Query rows printed per head (default 16; --json prints all)")
        ->check(attnforge::cli::non_negative);
    viz_cmd->add_option("--engine", viz.engine, "kernel (generated code) or interpreter (float64 reference)")
        ->check(CLI::IsMember({"kernel", "interpreter"}));
    viz_cmd->add_option("--threads", viz.threads, "Threads for this run (default: one per core)")
        ->check(attnforge::cli::positive);
    viz_cmd->add_flag("--json", viz.json,
                      "Print the layout (pixel positions, colour map) and every row's statistics as JSON");

    // Listed for --help only: main() hands `tune` to attnforge-tune before parsing.
    app.add_subcommand("tune",
                       "Tune a variant's schedule for given sizes on this machine and record it for the next build "
                       "(attnforge tune --help)")
        ->allow_extras();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int status = app.exit(e);  // prints help or the usage error
        return status == 0 ? 0 : 2;
    }
    if (*list_cmd) return attnforge::cli::list(list, std::cout);
    if (*run_cmd) return attnforge::cli::run(run, std::cout, std::cerr);
    if (*bench_cmd) return attnforge::cli::bench(bench, std::cout, std::cerr);
    if (*quantize_cmd) return attnforge::cli::quantize(quantize, std::cout, std::cerr);
    if (*viz_cmd) return attnforge::cli::viz(viz, std::cout, std::cerr);
    return 2;
}
