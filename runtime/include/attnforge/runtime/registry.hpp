// The kernel registry: every kernel of generated/kernels.list (and tuned kernels from
// generated/tuning_records.jsonl), its source written at configure time by the catalogue program
// (catalogue/) from the same lines that make the kernels.
#pragma once

#include <attnforge/dsl/passes/flop_count.hpp>
#include <attnforge/dsl/passes/signature.hpp>

#include <HalideRuntime.h>

#include <span>
#include <string_view>

namespace attnforge::runtime {

struct KernelEntry {
    std::string_view name;        // e.g. "sdpa__streaming"
    std::string_view variant;     // the DSL graph it was generated from
    std::string_view result;      // "output", "attention_weights" or "logsumexp"
    std::string_view strategy;    // a name of the strategy table (catalogue/strategies.hpp) or an autoscheduler
    std::string_view size_class;  // any | Lk<=N | Lk>N | A<Lk<=B (a tuned kernel's bucket)
    std::string_view knobs;       // schedule knobs from the list, "name=value ..."
    std::string_view schedule;    // "default" (generated/kernels.list) or "tuned, record <id>" (tuning records)
    std::string_view storage;     // "float32", "bf16" or "fp16": what its float tensors (inputs, output) are
    std::string_view input_types; // inputs of a type of their own, "k=bf16 v=bf16" (sorted by name); "" none
    int head_width;               // the E it serves where the variant's E is run-time (its line's E list); 0 otherwise
    int (*argv)(void**);          // Halide's argv entry point: inputs in order, then output
    const halide_filter_metadata_t* (*metadata)();
    // block_mask kernels (knob block_mask=1): their pre-pass, which computes from the same inputs the
    // ranges of live key blocks the kernel takes as its last input; null otherwise.
    int (*prepass_argv)(void**);
    const halide_filter_metadata_t* (*prepass_metadata)();
    // Made once, on first use (a call reads them twice: they were rebuilt, strings and all, every time).
    const dsl::graph_signature& (*signature)();           // the variant's inputs and output
    const dsl::tensor_spec& (*result_spec)();             // what this kernel writes
    const dsl::tensor_spec& (*attention_weights_spec)();  // the variant's attention weights (B, Hq, Lq, Lk)
    double (*flops)(const dsl::FlopSizes&);               // the variant's dense flop count at these sizes
};

std::span<const KernelEntry> registry();

}  // namespace attnforge::runtime
