// The attnforge command's sub-commands, as a library: main.cpp only parses arguments and calls these.
// Each returns the process exit status (docs/contract.md §3): 0 success, 2 bad usage or bad input, 1 other.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnforge::cli {

struct ListOptions {
    bool json = false;
};
int list(const ListOptions&, std::ostream& out);

struct RunOptions {
    std::string variant;
    std::vector<std::string> inputs;  // NAME=FILE.npy
    std::string output;
    std::string engine = "kernel";  // kernel | interpreter
    std::string attention_weights;  // optional FILE.npy
    std::string logsumexp;          // optional FILE.npy
    std::string dtype = "float32";  // the kernels' storage type: float32 | bf16 | fp16
    int threads = 0;
};
int run(const RunOptions&, std::ostream& out, std::ostream& err);

struct BenchOptions {
    std::string variant;
    std::int64_t batch = 1, heads = 8, length = 512;
    std::optional<std::int64_t> kv_heads;  // Hkv, for a run-time Hkv (default: --heads, MHA)
    std::int64_t head_width = 64;          // E, for a run-time head width
    std::optional<std::int64_t> lq, lk;
    std::vector<int> threads = {1, 2};
    std::string strategy;      // empty: every output kernel of the variant
    bool chosen_only = false;  // only the kernel the rule picks
    int min_repeats = 5;
    double min_seconds = 0.5;
    bool interpreter = true;
    bool json = false;
    std::vector<std::string> inputs;  // NAME=FILE.npy: these instead of synthetic ones (same shapes)
    std::string dtype = "float32";    // the kernels' storage type: float32 | bf16 | fp16
    std::vector<std::string> input_dtypes;  // NAME=TYPE: kernels taking that input in a type of its own
};
int bench(const BenchOptions&, std::ostream& out, std::ostream& err);

struct QuantizeOptions {
    std::string values;                // (B, Hkv, Lnew, E) .npy: the new tokens' keys or values
    std::string codes, scale, zero;    // the cache's files: read where codes exists, written; no zero: int8 codes
    std::optional<std::int64_t> group;  // a new int8 cache's scale per `group` channels (default: per token)
    std::string kv_length;             // optional (B) int32 .npy: where the new tokens go (zeros)
    std::optional<std::int64_t> lmax;  // slots of a new cache (default Lnew)
    std::string open_block;            // uint8 keys by channel: the open block's kept tokens (B, Hkv, T, E) .npy
};
int quantize(const QuantizeOptions&, std::ostream& out, std::ostream& err);

struct VizOptions {
    std::string variant;
    std::vector<std::string> inputs;  // NAME=FILE.npy
    std::string png;
    std::int64_t batch = 0;
    std::optional<std::int64_t> head;              // every head when not given
    std::string tokens, query_tokens, key_tokens;  // label files, one token per line
    std::int64_t top_k = 3;
    std::int64_t max_rows = 16;  // rows printed per head (text only; --json has every row)
    std::string engine = "kernel";
    int threads = 0;
    bool json = false;
};
int viz(const VizOptions&, std::ostream& out, std::ostream& err);

}  // namespace attnforge::cli
