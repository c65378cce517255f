#include <attnforge/interp/binding.hpp>

#include <attnforge/errors.hpp>

#include <algorithm>

namespace attnforge::interp {

using dim_spec = dsl::dim_spec;

std::vector<std::int64_t> RuntimeSizes::shape_of(const dsl::tensor_spec& spec) const {
    std::vector<std::int64_t> shape;
    for (const dim_spec& d : spec.dims) {
        switch (d.role) {
            case dim_spec::axis::batch: shape.push_back(batch); break;
            case dim_spec::axis::heads: shape.push_back(heads); break;
            case dim_spec::axis::fixed: shape.push_back(d.size); break;
            case dim_spec::axis::sequence: {
                auto it = sequence_length.find(d.sequence);
                shape.push_back(it == sequence_length.end() ? -1 : it->second);
            }
        }
    }
    return shape;
}

std::string RuntimeSizes::describe(const dsl::tensor_spec& spec) const {
    const std::vector<std::int64_t> shape = shape_of(spec);
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        s += i ? ", " : "";
        const dim_spec& d = spec.dims[i];
        if (d.role == dim_spec::axis::fixed) s += std::to_string(d.size);
        else s += d.symbol() + (shape[i] >= 0 ? "=" + std::to_string(shape[i]) : "");
    }
    return s + ")";
}

namespace {

std::string input_names(const dsl::graph_signature& sig) {
    std::string s;
    for (const auto& in : sig.inputs) s += (s.empty() ? "" : ", ") + in.name + in.shape_symbol();
    return s;
}

}  // namespace

BoundInputs bind_inputs(const dsl::graph_signature& sig, const TensorMap& given) {
    for (const auto& [name, tensor] : given) {
        bool known = false;
        for (const auto& in : sig.inputs) known = known || in.name == name;
        if (!known)
            throw input_error(sig.name + ": unexpected input '" + name + "'; it takes " + input_names(sig));
    }
    BoundInputs bound;
    RuntimeSizes& sizes = bound.sizes;
    for (const auto& spec : sig.inputs) {
        auto it = given.find(spec.name);
        if (it == given.end())
            throw input_error(sig.name + ": missing input '" + spec.name + "' of shape " + sizes.describe(spec) +
                              "; it takes " + input_names(sig));
        const Tensor& t = it->second;
        const RuntimeSizes known_before = sizes;  // the message shows what was known before this input
        auto mismatch = [&] {
            return input_error(sig.name + ": input '" + spec.name + "' must have shape " + known_before.describe(spec) +
                               ", given " + t.shape_string());
        };
        if (t.rank() != static_cast<std::int64_t>(spec.dims.size())) throw mismatch();
        for (std::size_t i = 0; i < spec.dims.size(); ++i) {
            const dim_spec& d = spec.dims[i];
            const std::int64_t n = t.shape[i];
            std::int64_t* slot = nullptr;
            switch (d.role) {
                case dim_spec::axis::batch: slot = &sizes.batch; break;
                case dim_spec::axis::heads: slot = &sizes.heads; break;
                case dim_spec::axis::sequence: {
                    auto [pos, inserted] = sizes.sequence_length.try_emplace(d.sequence, -1);
                    slot = &pos->second;
                    break;
                }
                case dim_spec::axis::fixed:
                    if (n != d.size) throw mismatch();
                    continue;
            }
            if (*slot >= 0 && *slot != n) throw mismatch();
            *slot = n;
        }
        Tensor stored = t;
        if (spec.dims.empty() || spec.dims.front().role != dim_spec::axis::batch) {
            // Unbatched activations run as B = 1; weights and vectors keep their shape.
            const bool per_sequence = std::any_of(spec.dims.begin(), spec.dims.end(), [](const dim_spec& d) {
                return d.role == dim_spec::axis::sequence;
            });
            if (per_sequence) stored.shape.insert(stored.shape.begin(), 1);
        }
        bound.tensors.emplace(spec.name, std::move(stored));
    }
    if (sizes.batch < 0) sizes.batch = 1;
    return bound;
}

}  // namespace attnforge::interp
