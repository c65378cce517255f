#include <attnforge/errors.hpp>
#include <attnforge/interp/binding.hpp>

#include <cmath>
#include <string>

namespace attnforge::interp {

BoundInputs bind_inputs(const dsl::graph_signature& sig, const TensorMap& given) {
    dsl::ShapeMap shapes;
    for (const auto& [name, tensor] : given) shapes.emplace(name, tensor.shape);
    BoundInputs bound{{}, dsl::check_shapes(sig, shapes)};
    for (const auto& spec : sig.inputs) {
        const auto it = given.find(spec.name);
        if (it == given.end()) {  // an optional input not given (a scale, a window, ALiBi's slopes): its default
            std::vector<double> values = dsl::default_input_values(sig, spec, bound.sizes);
            std::vector<std::int64_t> shape;
            if (!spec.dims.empty()) shape.push_back(static_cast<std::int64_t>(values.size()));
            bound.tensors.emplace(spec.name, Tensor(std::move(shape), std::move(values)));
            continue;
        }
        Tensor stored = it->second;
        if (spec.dtype == dsl::element_type::int32)
            for (std::size_t i = 0; i < stored.data.size(); ++i)
                dsl::index_value(stored.data[i], sig.name + ": input '" + spec.name + "'", i);
        dsl::check_input_values(sig, spec, bound.sizes, static_cast<std::int64_t>(stored.data.size()),
                                [&](std::int64_t i) { return stored.data[static_cast<std::size_t>(i)]; });
        // Unbatched activations run as B = 1; weights and vectors keep their shape.
        if (!dsl::is_batched(spec) && dsl::has_sequence_axis(spec)) stored.shape.insert(stored.shape.begin(), 1);
        bound.tensors.emplace(spec.name, std::move(stored));
    }
    return bound;
}

}  // namespace attnforge::interp
