#include "bound_kernel.hpp"

#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <nanobind/stl/string.h>

#include <algorithm>

namespace attnforge::python {

namespace {

std::string size_name(const dsl::dim_spec& d) {
    switch (d.role) {
        case dsl::dim_spec::axis::batch:
            return "B";
        case dsl::dim_spec::axis::heads:
            return "H";
        case dsl::dim_spec::axis::kv_heads:
            return "Hkv";
        case dsl::dim_spec::axis::head_width:
            return "E";
        case dsl::dim_spec::axis::sequence:
            return "L" + d.sequence;
        default:
            return {};
    }
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
}

}  // namespace

std::vector<std::string> size_names(const dsl::graph_signature& signature) {
    std::vector<std::string> names;
    auto add = [&](const dsl::tensor_spec& spec) {
        for (const auto& d : spec.dims) {
            const std::string n = size_name(d);
            if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        }
    };
    for (const auto& spec : signature.inputs) add(spec);
    add(signature.output);
    return names;
}

BoundKernel::BoundKernel(const std::string& variant, const std::string& result, const std::optional<std::string>& dtype,
                         const std::optional<int>& threads, const nb::kwargs& sizes)
    : variant_(variant), result_(result), storage_(runtime::storage_type_named(dtype.value_or("float32"))),
      threads_(threads) {
    run_options(threads, result, storage_);  // checks threads
    const dsl::graph_signature& sig = runtime::signature_of(variant);
    const std::vector<std::string> names = size_names(sig);
    dsl::RuntimeSizes bound;
    for (const auto& [key, value] : sizes) {
        const std::string name = nb::cast<std::string>(key);
        if (std::find(names.begin(), names.end(), name) == names.end())
            throw input_error(variant + ": unknown size '" + name + "'; its sizes are " + joined(names));
        std::int64_t n = 0;
        if (!nb::try_cast(value, n, false) || n < 0)
            throw input_error(variant + ": size " + name + " must be a whole number ≥ 0, given " +
                              nb::cast<std::string>(nb::repr(value)));
        if (name == "B")
            bound.batch = n;
        else if (name == "H")
            bound.heads = n;
        else if (name == "Hkv")
            bound.kv_heads = n;
        else if (name == "E")
            bound.head_width = n;
        else
            bound.sequence_length[name.substr(1)] = n;
    }
    for (const auto& name : names) {
        const bool given = sizes.contains(name.c_str());
        if (!given) throw input_error(variant + ": kernel() needs every size, " + joined(names) + "; " + name + " is missing");
        sizes_.emplace_back(name, nb::cast<std::int64_t>(sizes[name.c_str()]));
    }
    dsl::check_head_group(variant, bound);
    kernel_ = &runtime::select_kernel(variant, bound, result, dsl::element_type_name(storage_));
    for (const auto& spec : sig.inputs) input_shapes_[spec.name] = bound.shape_of(spec);
    output_shape_ = bound.shape_of(kernel_->result_spec());
}

std::string BoundKernel::sizes_text() const {
    std::string s;
    for (const auto& [name, n] : sizes_) s += (s.empty() ? "" : ", ") + name + "=" + std::to_string(n);
    return s;
}

nb::object BoundKernel::call(const nb::kwargs& given, nb::handle out) const {
    const dsl::graph_signature& sig = kernel_->signature();
    const Inputs inputs = borrow_inputs(variant_, sig, given, storage_);
    for (const auto& [name, view] : inputs.views) {
        const std::vector<std::int64_t>& expected = input_shapes_.at(name);
        const auto& dims = std::find_if(sig.inputs.begin(), sig.inputs.end(), [&](const dsl::tensor_spec& s) {
                               return s.name == name;
                           })->dims;
        bool fits = view.shape.size() == expected.size();
        for (std::size_t d = 0; fits && d < expected.size(); ++d)
            fits = view.shape[d] == expected[d] || (dims[d].broadcast && view.shape[d] == 1);
        if (!fits)
            throw input_error("kernel " + std::string(kernel_->name) + " bound to " + sizes_text() + ": input '" + name +
                              "' must be " + dsl::shape_string(expected) + ", given " + dsl::shape_string(view.shape));
    }
    const runtime::RunOptions options = run_options(threads_, result_, storage_);
    const dsl::element_type dtype = runtime::result_dtype(*kernel_);
    if (!out.is_none()) {
        nb::ndarray<> keep;
        const runtime::OutputView view = borrow_output(out, output_shape_, dtype, std::string(kernel_->name), keep);
        call_kernel(*kernel_, inputs, view, options);
        return nb::borrow(out);
    }
    ResultArray result(output_shape_, dtype, inputs.torch);
    call_kernel(*kernel_, inputs, result.output(), options);
    return result.release();
}

}  // namespace attnforge::python
