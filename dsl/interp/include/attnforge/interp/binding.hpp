// binding: the interpreter's tensors bound to a graph's signature: their shapes checked and the run-time
// sizes learnt by dsl::check_shapes (attnforge/dsl/passes/bind_shapes.hpp), unbatched ones given B = 1.
#pragma once

#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/interp/tensor.hpp>

#include <map>
#include <string>

namespace attnforge::interp {

using TensorMap = std::map<std::string, Tensor, std::less<>>;

struct BoundInputs {
    TensorMap tensors;  // every input by name, with a leading batch axis of 1 added to unbatched ones
    dsl::RuntimeSizes sizes;
};

// dsl::check_shapes, then the tensors themselves, unbatched ones given a batch axis of 1.
BoundInputs bind_inputs(const dsl::graph_signature& signature, const TensorMap& given);

}  // namespace attnforge::interp
