// binding: matches caller tensors to a graph's signature by name, checks every shape, and learns the
// run-time sizes (B, each sequence length, a run-time head count). Errors name the input and both the
// expected and the given shape.
#pragma once

#include <attnforge/dsl/passes/signature.hpp>
#include <attnforge/interp/tensor.hpp>

#include <map>
#include <string>

namespace attnforge::interp {

using TensorMap = std::map<std::string, Tensor, std::less<>>;

struct RuntimeSizes {
    std::int64_t batch = -1;  // -1: not bound yet
    std::map<std::string, std::int64_t, std::less<>> sequence_length;
    std::int64_t heads = -1;  // run-time head count, where the graph has one

    // The shape of spec under these sizes; an unknown size is -1.
    std::vector<std::int64_t> shape_of(const dsl::tensor_spec& spec) const;
    // "(B=2, L[x]=5, 512)": the spec's symbols with the sizes known so far.
    std::string describe(const dsl::tensor_spec& spec) const;
};

struct BoundInputs {
    TensorMap tensors;  // every input by name, with a leading batch axis of 1 added to unbatched ones
    RuntimeSizes sizes;
};

using ShapeMap = std::map<std::string, std::vector<std::int64_t>, std::less<>>;

// Checks the shapes of the given inputs (by name) against the signature and learns the run-time
// sizes. Throws attnforge::input_error for a missing, extra or misshapen input.
RuntimeSizes check_shapes(const dsl::graph_signature& signature, const ShapeMap& given);

// check_shapes, then the tensors themselves, unbatched ones given a batch axis of 1.
BoundInputs bind_inputs(const dsl::graph_signature& signature, const TensorMap& given);

}  // namespace attnforge::interp
