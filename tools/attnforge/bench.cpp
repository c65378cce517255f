// attnforge bench VARIANT [--batch B] [--heads H] [--kv-heads Hkv] [--head-width E] [--length L] [--lq N] [--lk N]
// [--threads N,...]
//                 [--strategy S] [--chosen-only] [--repeats N] [--min-seconds S] [--no-interpreter] [--json]
//                 [--input NAME=FILE.npy ...]
// Protocol: inputs and the output made once; per (threads, kernel): 2 warm-up calls, then repeated calls until at
// least --repeats calls and 0.5 s, reporting the median. The FMA peak (for bf16 kernels the bf16
// dot-product peak too, which their % peak is of) and the read bandwidth are
// measured in the same run, per thread count, and every GFLOP/s and GB/s (the bytes of the inputs and
// the output over the time: what a memory-bound kernel must move) is also given as a fraction of them;
// the bandwidth a kernel's GB/s is a fraction of is measured between its calls (time_with_bandwidth).
// Cache lengths are full (a decode step over a filled cache). The flop count is the dense
// one of dsl::flop_count (matrix products only; causal variants counted dense).
#include "commands.hpp"
#include "exit_status.hpp"
#include "fma_peak.hpp"
#include "huge_pages.hpp"
#include "read_bandwidth.hpp"
#include "tensors.hpp"
#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/errors.hpp>
#include <attnforge/interp/tensor.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <ostream>

namespace attnforge::cli {

namespace {

// A kernel's time and the read bandwidth of the same moments. The memory of a shared machine is not
// always as fast (measured on this project's 2-core Zen 4: the two-thread probe read 33 or 54 GB/s,
// switching every few seconds, as another tenant's load came and went), so a fraction of a bandwidth
// measured before the kernel put one at 83 % or 167 %. The calls are timed in slices of about 50 ms of the
// kernel's time, with a pass of the probe (read_bandwidth.hpp) before the first slice and after each one: both
// medians then sample the same moments.
struct Timing {
    double seconds;        // the median call
    double bandwidth_gbs;  // the median probe pass between the calls
    int probe_passes;
};

Timing time_with_bandwidth(const std::function<void()>& call, int threads, int min_repeats, double min_seconds) {
    constexpr double slice_seconds = 0.05;
    constexpr std::size_t max_calls = 1000;
    for (int i = 0; i < 2; ++i) call();  // warm-up: thread pool, caches, page faults
    std::vector<double> times, passes{read_bandwidth_pass(threads)};
    double timed = 0;
    while (static_cast<int>(times.size()) < min_repeats || timed < min_seconds) {
        double slice = 0;
        while (slice < slice_seconds && times.size() < max_calls &&
               (static_cast<int>(times.size()) < min_repeats || timed + slice < min_seconds)) {
            const auto t0 = std::chrono::steady_clock::now();
            call();
            times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            slice += times.back();
        }
        timed += slice;
        passes.push_back(read_bandwidth_pass(threads));
        if (times.size() >= max_calls) break;
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    return {median(times), median(passes), static_cast<int>(passes.size())};
}

}  // namespace

int bench(const BenchOptions& o, std::ostream& out, std::ostream& err) {
    return with_exit_status("bench", err, [&](std::ostream& warnings) {
        // Everything about the variant through the registry (runtime/engine.hpp), so a downstream
        // build's own variants bench too.
        const dsl::graph_signature& sig = runtime::signature_of(o.variant);
        attnforge::testing::SyntheticSizes sizes{o.batch, o.heads, {}, o.kv_heads.value_or(o.heads), o.head_width};
        dsl::check_head_group(o.variant, {o.batch, {}, sizes.heads, sizes.kv_heads});
        const auto [seq_q, seq_k] = runtime::attention_sequences_of(o.variant);
        for (const auto& in : sig.inputs)
            for (const auto& d : in.dims)
                if (d.role == dsl::dim_spec::axis::sequence) {
                    const std::int64_t n = d.sequence == seq_q   ? o.lq.value_or(o.length)
                                           : d.sequence == seq_k ? o.lk.value_or(o.length)
                                                                 : o.length;
                    sizes.length[d.sequence] = n;
                }
        const double flops =
            runtime::flops_of(o.variant, {double(o.batch), double(sizes.heads),
                                          [&](std::string_view s) { return double(sizes.length.at(std::string(s))); },
                                          double(o.head_width)});
        // A decode step reads a filled cache: every cache length is Lmax.
        attnforge::testing::SyntheticOptions input_options;
        input_options.full_caches = true;
        runtime::TensorMap inputs = attnforge::testing::synthetic_inputs(sig, sizes, input_options);
        const dsl::element_type storage = runtime::storage_type_named(o.dtype);
        runtime::first_kernel(o.variant, "output", o.dtype);  // it has kernels of that storage type
        // Inputs given as files (index inputs above all: document ids, lengths, masks decide which
        // blocks a kernel visits) replace the synthetic ones; the sizes still come from the options.
        for (auto& [name, given] : load_inputs(o.variant, sig, o.inputs, warnings)) {
            const runtime::Tensor& made = inputs.at(name);
            if (given.shape != made.shape)
                throw input_error(fmt::format(
                    "input '{}' has shape {}; --batch {} --heads {} and the lengths given "
                    "need {}",
                    name, interp::shape_string(given.shape), o.batch, sizes.heads, interp::shape_string(made.shape)));
            inputs.insert_or_assign(name, std::move(given));
        }
        // Inputs of types of their own (--input-dtype), as KernelEntry::input_types writes them: "k=bf16 v=bf16".
        std::vector<std::string> own = o.input_dtypes;
        std::sort(own.begin(), own.end());
        std::string input_types;
        for (const std::string& word : own) {
            const std::size_t eq = word.find('=');
            const bool known = std::any_of(sig.inputs.begin(), sig.inputs.end(), [&](const dsl::tensor_spec& s) {
                return s.name == word.substr(0, eq) && s.dtype == dsl::element_type::float32;
            });
            if (eq == std::string::npos || !known)
                throw input_error("--input-dtype " + word + ": expected NAME=TYPE with NAME a float input of " +
                                  o.variant);
            runtime::storage_type_named(word.substr(eq + 1));  // float32, bf16 or fp16, else its message
            input_types += (input_types.empty() ? "" : " ") + word;
        }
        if (!input_types.empty() && runtime::kernels_for(o.variant, "output", o.dtype, input_types).empty())
            throw input_error(o.variant + " has no " + o.dtype + " kernel taking " + input_types);
        // bf16/fp16 kernels: their inputs rounded to it (or to each input's own type).
        inputs = runtime::to_storage(inputs, storage, input_types, sig);
        // The bytes a call must move at least: every input read once, the output written once. What
        // bounds a memory-bound kernel (decoding: the K and V caches), against the read bandwidth.
        double bytes = 0;
        for (const auto& [name, t] : inputs) bytes += static_cast<double>(t.element_count()) * double(t.item_bytes());
        // Measured once the inputs exist (before the bandwidth probe's own buffer): how much of them the
        // kernel streams through 2 MiB pages (main.cpp: malloc under glibc.malloc.hugetlb=1).
        const std::optional<double> huge_pages = anon_huge_page_bytes();
        bytes += static_cast<double>(dsl::element_count(attnforge::testing::shape_for(sig.output, sizes))) *
                 (storage == dsl::element_type::float32 ? 4.0 : 2.0);
        std::string shape = fmt::format("B={}", o.batch);
        for (const auto& [seq, n] : sizes.length) shape += fmt::format(" L[{}]={}", seq, n);
        for (const auto& d : sig.inputs.front().dims)
            if (d.role == dsl::dim_spec::axis::heads) shape += fmt::format(" H={}", sizes.heads);
        for (const auto& in : sig.inputs)
            if (std::any_of(in.dims.begin(), in.dims.end(),
                            [](const dsl::dim_spec& d) { return d.role == dsl::dim_spec::axis::kv_heads; })) {
                shape += fmt::format(" Hkv={}", sizes.kv_heads);
                break;
            }
        for (const auto& d : sig.inputs.front().dims)
            if (d.role == dsl::dim_spec::axis::head_width) shape += fmt::format(" E={}", sizes.head_width);

        nlohmann::json rows = nlohmann::json::array();
        out << fmt::format("attnforge bench {}: {}{}, {:.3f} GFLOP per call (dense), {:.1f} MB moved at least\n",
                           o.variant, shape,
                           (o.dtype == "float32" ? "" : ", " + o.dtype + " storage") +
                               (input_types.empty() ? "" : ", inputs " + input_types),
                           flops / 1e9,
                           bytes / 1e6);
        if (huge_pages) out << fmt::format("{:.1f} MB of the process in transparent huge pages\n", *huge_pages / 1e6);
        out << fmt::format("{:>7} {:<44} {:>10} {:>10} {:>8} {:>8} {:>6}\n", "threads", "engine", "ms", "GFLOP/s",
                           "% peak", "GB/s", "% bw");
        for (int threads : o.threads) {
            const Peak fma = measure_fma_peak(threads);
            // bf16 kernels are measured against the machine's bf16 peak where it has one (AMX tiles, else
            // vdpbf16ps on AMD's cores: their products), float32 and fp16 kernels against the FMA peak.
            const std::optional<Peak> dot =
                storage == dsl::element_type::bfloat16 ? measure_bf16_peak(threads) : std::nullopt;
            const Peak peak = dot.value_or(fma);
            const Bandwidth bandwidth = measure_read_bandwidth(threads);
            out << fmt::format("{:>7} {:<44} {:>10} {:>10.1f} {:>8}\n", threads,
                               std::string("FMA peak (") + fma.isa + ")", "", fma.gflops, dot ? "" : "100.0");
            if (dot)
                out << fmt::format("{:>7} {:<44} {:>10} {:>10.1f} {:>8}\n", threads,
                                   std::string("bf16 peak (") + dot->isa + ")", "", dot->gflops, "100.0");
            out << fmt::format("{:>7} {:<44} {:>10} {:>10} {:>8} {:>8.1f}\n", threads,
                               std::string("read bandwidth (") + bandwidth.isa + ", 512 MiB, fastest of 5)", "", "",
                               "", bandwidth.gbs);
            for (const runtime::KernelEntry* k : runtime::kernels_for(o.variant, "output", o.dtype, input_types)) {
                if (!o.strategy.empty() && k->strategy != o.strategy) continue;
                if (k->head_width && k->head_width != sizes.head_width) continue;  // another E's kernel
                const bool chosen = &runtime::select_kernel(o.variant, inputs, "output", o.dtype) == k;
                if (o.chosen_only && !chosen) continue;
                runtime::RunOptions ro;
                ro.threads = threads;
                // One output for all calls, as a serving loop would keep it (a fresh one is a fresh mapping to
                // page-fault in every call, which is not what the kernel costs).
                runtime::Tensor result = runtime::run_kernel(*k, inputs, ro);
                const Timing timing = time_with_bandwidth(
                    [&] { runtime::run_kernel_into(*k, inputs, result, ro); }, threads, o.min_repeats, o.min_seconds);
                const double s = timing.seconds, read_gbs = timing.bandwidth_gbs;
                const std::string engine = std::string(k->name) + (chosen ? " *" : "");
                out << fmt::format("{:>7} {:<44} {:>10.3f} {:>10.1f} {:>8.1f} {:>8.1f} {:>6.1f}\n", threads, engine,
                                   s * 1e3, flops / s / 1e9, 100.0 * flops / s / 1e9 / peak.gflops, bytes / s / 1e9,
                                   100.0 * bytes / s / 1e9 / read_gbs);
                rows.push_back({{"variant", o.variant},
                                {"shape", shape},
                                {"threads", threads},
                                {"engine", k->name},
                                {"dtype", o.dtype},
                                {"input_types", input_types},
                                {"chosen_by_rule", chosen},
                                {"ms", s * 1e3},
                                {"gflops", flops / s / 1e9},
                                {"peak_gflops", peak.gflops},
                                {"peak", !dot                                       ? "fma"
                                         : std::string_view(dot->isa) == "amx_bf16" ? "bf16_tiles"
                                                                                    : "bf16_dot_product"},
                                {"fma_peak_gflops", fma.gflops},
                                {"fraction_of_peak", flops / s / 1e9 / peak.gflops},
                                {"bytes", bytes},
                                {"gbs", bytes / s / 1e9},
                                {"read_bandwidth_gbs", read_gbs},
                                {"read_bandwidth_passes", timing.probe_passes},
                                {"read_bandwidth_fastest_gbs", bandwidth.gbs},
                                {"fraction_of_bandwidth", bytes / s / 1e9 / read_gbs},
                                {"huge_page_bytes", huge_pages ? nlohmann::json(*huge_pages) : nlohmann::json()}});
            }
        }
        if (o.interpreter) {
            const auto t0 = std::chrono::steady_clock::now();
            (void)runtime::evaluate(o.variant, inputs, runtime::Engine::interpreter);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            out << fmt::format("{:>7} {:<44} {:>10.3f} {:>10.1f} {:>8}\n", 1, "interpreter (float64, one call)",
                               s * 1e3, flops / s / 1e9, "");
            rows.push_back({{"variant", o.variant},
                            {"shape", shape},
                            {"threads", 1},
                            {"engine", "interpreter"},
                            {"ms", s * 1e3},
                            {"gflops", flops / s / 1e9}});
        }
        out << "* the kernel the rule picks for these sizes\n"
               "% bw: of the read bandwidth measured between the kernel's calls (the median of probe passes run\n"
               "  after every 50 ms of calls); the line above it is the fastest of 5 passes before them\n";
        if (o.json) out << rows.dump(2) << "\n";
        return 0;
    });
}

}  // namespace attnforge::cli
