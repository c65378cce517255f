#include "workload.hpp"

#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/runtime/storage_types.hpp>

namespace attnforge::tune {

Workload::Workload(const Problem& p) {
    // A bf16/fp16 kernel takes its float inputs in its storage type, rounded once (the reference evaluates
    // the same rounded values), and writes its output in it.
    const dsl::element_type storage = runtime::storage_type_named(p.storage);
    inputs = runtime::to_storage(attnforge::testing::synthetic_inputs(p.signature, p.sizes, {}), storage, p.signature);
    // An optional input (a scale) as the runtime passes it where a call gives none: its default (1/√E).
    dsl::RuntimeSizes sizes;
    sizes.heads = p.sizes.heads;
    sizes.head_width = p.head_width;
    for (const auto& spec : p.signature.inputs)
        if (spec.optional() && !inputs.contains(spec.name)) {
            const std::vector<double> values = dsl::default_input_values(p.signature, spec, sizes);
            std::vector<std::int64_t> shape;
            if (!spec.dims.empty()) shape.push_back(static_cast<std::int64_t>(values.size()));
            runtime::Tensor t = spec.dtype == dsl::element_type::int32 ? runtime::Tensor::int32(shape)
                                                                       : runtime::Tensor::float32(shape);
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (spec.dtype == dsl::element_type::int32)
                    t.i32[i] = static_cast<std::int32_t>(values[i]);
                else
                    t.f32[i] = static_cast<float>(values[i]);
            }
            inputs.emplace(spec.name, std::move(t));
        }
    output = storage == dsl::element_type::float32 ? runtime::Tensor::float32(p.result_shape())
                                                   : runtime::Tensor::storage16(storage, p.result_shape());
    const std::size_t n = p.signature.inputs.size();
    dims_.resize(n + 1);
    buffers_.resize(n + 1);
    for (std::size_t i = 0; i < n; ++i) {
        const runtime::Tensor& t = inputs.at(p.signature.inputs[i].name);
        buffers_[i] = runtime::describe(t.data(), t.dtype, t.shape, dims_[i]);
    }
    buffers_[n] = runtime::describe(output.data(), output.dtype, output.shape, dims_[n]);
    argv.push_back(nullptr);
    for (auto& b : buffers_) argv.push_back(&b);
}

}  // namespace attnforge::tune
