#include "calls.hpp"

#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <nanobind/stl/string.h>

#include <cstring>

namespace attnforge::python {

Inputs borrow_inputs(const std::string& variant, const dsl::graph_signature& signature, const nb::kwargs& given,
                     std::optional<dsl::element_type> storage) {
    Inputs in;
    std::vector<std::pair<const dsl::tensor_spec*, nb::ndarray<nb::ro>>> arrays;
    std::string implied_by;
    dsl::element_type implied = dsl::element_type::float32;
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
        arrays.emplace_back(spec, import_array(variant, *spec, value));
        const dsl::element_type t = spec->dtype == dsl::element_type::float32 ? storage_implied_by(arrays.back().second)
                                                                               : dsl::element_type::float32;
        if (t == dsl::element_type::float32 || storage) continue;
        if (!implied_by.empty() && t != implied)
            throw input_error(signature.name + ": inputs '" + implied_by + "' and '" + name +
                              "' imply different storage types (" + dsl::element_type_name(implied) + ", " +
                              dsl::element_type_name(t) + "); give dtype=");
        implied = t;
        implied_by = name;
    }
    in.storage = storage.value_or(implied);
    for (auto& [spec, array] : arrays) {
        const BorrowedInput& held =
            in.held.emplace(spec->name, borrow_input(variant, *spec, std::move(array), in.storage)).first->second;
        in.views.emplace(spec->name, held.view);
    }
    return in;
}

std::optional<dsl::element_type> storage_asked(const std::optional<std::string>& dtype) {
    if (!dtype) return std::nullopt;
    return runtime::storage_type_named(*dtype);
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
