// Binding a signature to shapes: matches caller shapes to a graph's inputs by name, checks every size
// and learns the run-time sizes (B, each sequence length, a run-time head count). Beside the signature
// pass because it is not interpretation: the runtime checks kernel inputs with it, the interpreter its
// own. Errors name the input and both the expected and the given shape.
#pragma once

#include <attnforge/dsl/passes/signature.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attnforge::dsl {

struct RuntimeSizes {
    std::int64_t batch = -1;  // -1: not bound yet
    std::map<std::string, std::int64_t, std::less<>> sequence_length;
    std::int64_t heads = -1;       // run-time head count, where the graph has one
    std::int64_t kv_heads = -1;    // run-time key/value head count Hkv (a divisor of heads), where it has one
    std::int64_t head_width = -1;  // run-time head width E, where it has one

    // The shape of spec under these sizes; an unknown size is -1.
    std::vector<std::int64_t> shape_of(const tensor_spec& spec) const;
    // "(B=2, L[x]=5, 512)": the spec's symbols with the sizes known so far.
    std::string describe(const tensor_spec& spec) const;
};

using ShapeMap = std::map<std::string, std::vector<std::int64_t>, std::less<>>;

// Checks the shapes of the given inputs (by name) against the signature and learns the run-time
// sizes; an optional input (a scale) may be missing. Throws attnforge::input_error for a missing, extra or
// misshapen input, and for a run-time Hkv that does not divide H.
RuntimeSizes check_shapes(const graph_signature& signature, const ShapeMap& given);
// The run-time head counts of sizes, where both are known: Hkv must divide H (a graph with a run-time Hkv). Throws
// attnforge::input_error naming the variant and both counts.
void check_head_group(const std::string& variant, const RuntimeSizes& sizes);

// The values of an optional input the call did not give, row-major, by its rule (tensor_spec::when_missing): a
// scale 1/√E (E the scale's own width or, where that is run-time, sizes.head_width: the call's, or the kernel's); a
// number of the graph; ALiBi's slopes 2^(−8(h+1)/H) for sizes.heads. Throws attnforge::input_error for a required
// input, or where a size it needs is not known (below 1).
std::vector<double> default_input_values(const graph_signature& signature, const tensor_spec& spec,
                                         const RuntimeSizes& sizes);
// Whether that rule needs the call's sizes beyond its head width (ALiBi's slopes: H).
bool default_needs_sizes(const tensor_spec& spec);

// The values of an input whose spec bounds them (cache lengths: [0, L[seq]]), given one at a time by
// `value` (count of them), after check_shapes. Throws attnforge::input_error naming the input, the
// first value outside and the bound. Index inputs that are not whole numbers are rejected where they
// are converted to int32 (runtime, io).
void check_input_values(const graph_signature& signature, const tensor_spec& spec, const RuntimeSizes& sizes,
                        std::int64_t count, const std::function<double(std::int64_t)>& value);

// docs/contract.md §4: a value given for an int32 index input (document ids, lengths, positions) must be a whole
// number within int32; else an input_error "<what> is an int32 index input, but holds <v> at index <at>". The
// one rule the CLI (.npy files), the Python module and the interpreter's binding apply.
std::int32_t index_value(double v, const std::string& what, std::size_t at);

// Inputs without a batch axis whose shape has a sequence axis (activations) run as B = 1.
bool is_batched(const tensor_spec& spec);
bool has_sequence_axis(const tensor_spec& spec);

// The product of the sizes. Throws attnforge::input_error for a negative size or a product beyond
// int64 (a shape read from an untrusted file must never reach an overflowing multiplication).
std::int64_t element_count(const std::vector<std::int64_t>& shape);
// "(2, 8, 5, 64)", "(3,)"
std::string shape_string(const std::vector<std::int64_t>& shape);

}  // namespace attnforge::dsl
