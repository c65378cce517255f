#include "calls.hpp"

#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <nanobind/stl/string.h>

#include <cstring>

namespace attnforge::python {

Inputs borrow_inputs(const std::string& variant, const dsl::graph_signature& signature, const nb::kwargs& given,
                     dsl::element_type storage) {
    Inputs in;
    for (const auto& [key, value] : given) {
        const std::string name = nb::cast<std::string>(key);
        const dsl::tensor_spec* spec = nullptr;
        for (const auto& s : signature.inputs) spec = s.name == name ? &s : spec;
        if (!spec) {
            std::string names;
            for (const auto& s : signature.inputs) names += (names.empty() ? "" : ", ") + s.name + s.shape_symbol();
            throw input_error(variant + ": unexpected input '" + name + "'; it takes " + names);
        }
        in.torch = in.torch || is_torch(value);
        in.held.push_back(borrow_input(variant, *spec, value, storage));
        in.views.emplace(name, in.held.back().view);
    }
    return in;
}

dsl::element_type storage_type(const std::optional<std::string>& dtype, const dsl::graph_signature& signature,
                               const nb::kwargs& inputs) {
    return dtype ? runtime::storage_type_named(*dtype) : storage_implied_by(signature, inputs);
}

runtime::RunOptions run_options(const std::optional<int>& threads, const std::string& result,
                                dsl::element_type storage) {
    if (threads && *threads < 1) throw input_error("threads must be at least 1, given " + std::to_string(*threads));
    runtime::RunOptions o;
    o.threads = threads.value_or(0);
    o.result = result;
    o.dtype = dsl::element_type_name(storage);
    return o;
}

void call_kernel(const runtime::KernelEntry& kernel, const Inputs& inputs, const runtime::OutputView& out,
                 const runtime::RunOptions& options) {
    try {
        nb::gil_scoped_release unlocked;
        runtime::run_kernel_into(kernel, inputs.views, out, options);
        return;
    } catch (const runtime::no_keys_error&) {
    }
    runtime::TensorMap owned;
    for (const auto& [name, view] : inputs.views) owned.emplace(name, owned_copy(view));
    const interp::Tensor r = runtime::interpret(kernel.variant, owned, kernel.result);
    for (std::size_t i = 0; i < r.data.size(); ++i) {
        const auto v = static_cast<float>(r.data[i]);
        if (out.dtype == dsl::element_type::float32) {
            static_cast<float*>(out.data)[i] = v;
        } else {
            static_cast<std::uint16_t*>(out.data)[i] = out.dtype == dsl::element_type::bfloat16
                                                           ? runtime::bf16_from_float(v)
                                                           : runtime::fp16_from_float(v);
        }
    }
}

}  // namespace attnforge::python
