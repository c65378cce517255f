// Kernels skip the key blocks a mask removes for a whole query tile — the bands (causal, sliding
// window) by loop bounds known when generating, run-time masks (documents, prefixes, key padding) by
// the block_mask pre-pass's ranges — and this is checked by what it does, not by a timing.
//
// The probe (nan_probe.hpp): kernels multiply a masked key's value by an exact 0 (docs/robustness.md), so a
// NaN in V at a masked key reaches every row of that head whose kernel visits the key's block. Values are made
// NaN at keys whose blocks are dead for a set of query rows (blocks of 256 keys and more, aligned, far
// from the band, so that any tile size of the schedules leaves them wholly dead); those rows must stay
// finite and bit-identical to the run with the finite values. A band that stops being skipped, or a
// pre-pass that returns full ranges, turns them NaN. The probe's own power is checked too: a kernel that
// does visit such blocks (the materialized strategy over a run-time mask, which skips bands only) shows
// the NaN.
#define BOOST_TEST_MODULE block_skipping
#include "nan_probe.hpp"
#include <attnforge/runtime/storage_types.hpp>
#include <attnforge/testing/kernels_at.hpp>

using namespace nan_probe;

namespace {

Sizes heads(std::int64_t H) {
    return {1, H, {{"q", L}, {"kv", L}, {"tokens", L}}};
}

void set_int32(runtime::Tensor& t, const std::function<std::int32_t(std::int64_t)>& value) {
    for (std::size_t i = 0; i < t.i32.size(); ++i) t.i32[i] = value(static_cast<std::int64_t>(i));
}

}  // namespace

// Causal: query rows [0, 256) see keys ≤ 255; keys [512, 1024) are dead for them.
BOOST_AUTO_TEST_CASE(causal_band) {
    every_kernel_skips({"sdpa_causal", heads(2), {}, "v", 2, 512, L, 2, 0, 256}, {"materialized", "streaming"});
}

// Sliding window of 128: rows [768, 1024) see keys ≥ 640; keys [0, 256) are dead for them.
BOOST_AUTO_TEST_CASE(sliding_window_band) {
    every_kernel_skips({"sliding_window_attention", heads(2), {}, "v", 2, 0, 256, 2, 768, L},
                       {"materialized", "streaming"});
}

// Two documents of 512 tokens: rows of the second never see the first's keys (run-time block mask).
BOOST_AUTO_TEST_CASE(documents_by_the_pre_pass) {
    const Probe p{"document_attention", heads(2),
                  [](runtime::TensorMap& in) { set_int32(in.at("document_ids"), [](std::int64_t i) { return i % L >= 512; }); },
                  "v", 2, 0, 256, 2, 512, L};
    every_kernel_skips(p, {"streaming"});
    // The probe sees a visit: the materialized kernel skips the causal band only, so it reaches the
    // first document's blocks from the second's rows and their NaN shows.
    for (const runtime::KernelEntry* k : attnforge::testing::kernels_at("document_attention", "output"))
        if (k->strategy == "materialized") BOOST_TEST(!skips(*k, p), k->name << ": the probe saw no visit");
}

// Prefix of 128 tokens: rows [0, 256) see keys ≤ 255; keys [512, 1024) are dead for them.
BOOST_AUTO_TEST_CASE(prefix_by_the_pre_pass) {
    every_kernel_skips({"prefix_lm_attention", heads(2),
                        [](runtime::TensorMap& in) { set_int32(in.at("prefix_length"), [](std::int64_t) { return 128; }); },
                        "v", 2, 512, L, 2, 0, 256},
                       {"streaming"});
}

// Key padding from 512 on (x NaN there: its keys, values and its own query rows): rows [0, 512) of
// the unpadded tokens never visit the padded blocks.
BOOST_AUTO_TEST_CASE(key_padding_by_the_pre_pass) {
    for (const char* variant : {"mha_padding", "mha_causal_padding"})
        every_kernel_skips({variant, {1, 0, {{"x", L}}},
                            [](runtime::TensorMap& in) {
                                auto& m = in.at("key_padding_mask").u8;
                                for (std::size_t i = 0; i < m.size(); ++i) m[i] = i % L >= 512;
                            },
                            "x", 1, 512, L, 1, 0, 512},
                           {"streaming"});
}

// A KV cache past its valid length holds whatever the caller left there: the decode kernels never read it
// (their last key tile ends at the length, docs/contract.md §2), so K and V made NaN there change nothing.
// Lengths that end inside a vector of keys and inside a bf16 pair of V rows, a full cache and an empty one.
BOOST_AUTO_TEST_CASE(cache_past_its_length) {
    constexpr std::int64_t Lmax = 1024;
    const std::vector<std::int32_t> lengths{1024, 37, 515, 0};
    int checked = 0;
    for (const char* variant : {"decode", "decode_gqa", "decode_sliding_window"})
        for (const char* dtype : {"float32", "bf16"})
            for (const runtime::KernelEntry* k : attnforge::testing::kernels_at(variant, "output", dtype)) {
                if (k->strategy != "decode") continue;
                for (const std::int64_t Lq : {1, 4}) {
                    const Sizes sizes{static_cast<std::int64_t>(lengths.size()), 2, {{"q", Lq}, {"kv", Lmax}}};
                    runtime::TensorMap inputs = attnforge::testing::synthetic_inputs(k->signature(), sizes, {});
                    set_int32(inputs.at("kv_length"), [&](std::int64_t b) { return lengths[static_cast<std::size_t>(b)]; });
                    const auto storage = runtime::storage_type_named(dtype);
                    const runtime::Tensor clean = runtime::to_float32(
                        runtime::run_kernel(*k, runtime::to_storage(inputs, storage, k->signature())));
                    for (const char* cache : {"k", "v"}) {
                        runtime::Tensor& t = inputs.at(cache);  // (B, Hkv, Lmax, E)
                        const std::int64_t heads = t.shape[1], width = t.shape[3];
                        for (std::int64_t b = 0; b < t.shape[0]; ++b)
                            for (std::int64_t h = 0; h < heads; ++h)
                                for (std::int64_t j = lengths[static_cast<std::size_t>(b)]; j < Lmax; ++j)
                                    for (std::int64_t e = 0; e < width; ++e)
                                        t.f32[static_cast<std::size_t>(((b * heads + h) * Lmax + j) * width + e)] = nan_value;
                    }
                    const runtime::Tensor probed = runtime::to_float32(
                        runtime::run_kernel(*k, runtime::to_storage(inputs, storage, k->signature())));
                    bool same = clean.f32.size() == probed.f32.size();
                    for (std::size_t i = 0; same && i < clean.f32.size(); ++i)
                        same = std::isfinite(probed.f32[i]) && probed.f32[i] == clean.f32[i];
                    BOOST_TEST(same, k->name << " Lq = " << Lq << ": the output changed with K and V NaN past kv_length");
                    ++checked;
                }
            }
    BOOST_TEST(checked >= 12, "decode kernels probed: " << checked);
}
