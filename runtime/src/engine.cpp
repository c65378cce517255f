#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/reference.hpp>

#include <string>

namespace attnforge::runtime {

Engine parse_engine(std::string_view name) {
    if (name == "kernel") return Engine::kernel;
    if (name == "interpreter") return Engine::interpreter;
    throw input_error("--engine must be 'kernel' or 'interpreter', given '" + std::string(name) + "'");
}

const dsl::graph_signature& signature_of(std::string_view variant) {
    return first_kernel(variant).signature();
}

const dsl::tensor_spec* result_spec_of(std::string_view variant, std::string_view result, std::string_view dtype) {
    first_kernel(variant);  // an unknown variant is an error, not "no such result"
    const auto kernels = kernels_for(variant, result, dtype);
    return kernels.empty() ? nullptr : &kernels.front()->result_spec();
}

const dsl::tensor_spec* attention_weights_of(std::string_view variant) {
    return result_spec_of(variant, "attention_weights");
}

dsl::attention_sequences_t attention_sequences_of(std::string_view variant) {
    return dsl::attention_sequences(first_kernel(variant).attention_weights_spec());
}

double flops_of(std::string_view variant, const dsl::FlopSizes& sizes) {
    return first_kernel(variant).flops(sizes);
}

interp::Tensor interpret(std::string_view variant, const TensorMap& inputs, std::string_view result) {
    first_kernel(variant, result);  // unknown variant or result: the runtime's message
    for (const ReferenceEntry& r : reference_registry())
        if (r.variant == variant && r.result == result) return r.interpret(to_float64(inputs));
    throw input_error("variant '" + std::string(variant) + "' has no reference for its " + std::string(result));
}

void evaluate_into(const KernelEntry& k, const ViewMap& inputs, const OutputView& out, const RunOptions& options) {
    try {
        run_kernel_into(k, inputs, out, options);
        return;
    } catch (const no_keys_error&) {
        // No kernel can read an empty key sequence: the spec's answer (fully masked rows).
    }
    const interp::Tensor r = interpret(k.variant, copies_of(inputs), k.result);
    for (std::size_t i = 0; i < r.data.size(); ++i) {
        const auto v = static_cast<float>(r.data[i]);
        const auto at = static_cast<std::size_t>(strided_offset(out.shape, out.strides, static_cast<std::int64_t>(i)));
        if (out.dtype == dsl::element_type::float32)
            static_cast<float*>(out.data)[at] = v;
        else
            static_cast<std::uint16_t*>(out.data)[at] =
                out.dtype == dsl::element_type::bfloat16 ? bf16_from_float(v) : fp16_from_float(v);
    }
}

Tensor evaluate(std::string_view variant, const TensorMap& inputs, Engine engine, const RunOptions& options) {
    if (engine == Engine::kernel) {
        const KernelEntry& k = select_kernel(variant, inputs, options.result, options.dtype);
        const ViewMap views = views_of(inputs);
        Tensor out = result_tensor(k, views);
        evaluate_into(k, views, output_view_of(out), options);
        return out;
    }
    const interp::Tensor r = interpret(variant, inputs, options.result);
    Tensor out;
    out.dtype = dsl::element_type::float32;
    out.shape = r.shape;
    out.f32.assign(r.data.begin(), r.data.end());
    return out;
}

}  // namespace attnforge::runtime
