#include <attnforge/interp/binding.hpp>

namespace attnforge::interp {

BoundInputs bind_inputs(const dsl::graph_signature& sig, const TensorMap& given) {
    dsl::ShapeMap shapes;
    for (const auto& [name, tensor] : given) shapes.emplace(name, tensor.shape);
    BoundInputs bound{{}, dsl::check_shapes(sig, shapes)};
    for (const auto& spec : sig.inputs) {
        Tensor stored = given.find(spec.name)->second;
        // Unbatched activations run as B = 1; weights and vectors keep their shape.
        if (!dsl::is_batched(spec) && dsl::has_sequence_axis(spec)) stored.shape.insert(stored.shape.begin(), 1);
        bound.tensors.emplace(spec.name, std::move(stored));
    }
    return bound;
}

}  // namespace attnforge::interp
