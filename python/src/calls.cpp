#include "calls.hpp"

#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstring>

namespace attnforge::python {

namespace {

// The storage type and input types of a kernel of `result` that takes the float inputs in the types given
// (`arrays`, with `types[i]` the type of arrays[i]'s float input, or none), if the build has one. Called only
// where the float inputs come in several types: a call with one type allocates nothing here.
std::optional<std::pair<dsl::element_type, std::string>> own_types_kernel(
    const std::string& variant, std::string_view result,
    const std::vector<std::pair<const dsl::tensor_spec*, nb::ndarray<nb::ro>>>& arrays,
    const std::vector<std::optional<dsl::element_type>>& types, std::optional<dsl::element_type> storage) {
    std::map<std::string_view, dsl::element_type> given;  // by name: KernelEntry::input_types' order
    for (std::size_t i = 0; i < arrays.size(); ++i)
        if (types[i]) given.emplace(arrays[i].first->name, *types[i]);
    for (const dsl::element_type_spec& row : dsl::element_types) {
        const dsl::element_type s = row.type;
        if (!row.storage || (storage && *storage != s)) continue;
        std::string own;
        for (const auto& [name, t] : given)
            if (t != s) own += (own.empty() ? "" : " ") + std::string(name) + "=" + dsl::element_type_name(t);
        if (!own.empty() && !runtime::kernels_for(variant, result, dsl::element_type_name(s), own).empty())
            return std::pair{s, own};
    }
    return std::nullopt;
}

}  // namespace

Inputs borrow_inputs(const std::string& variant, const dsl::graph_signature& signature, const nb::kwargs& given,
                     std::optional<dsl::element_type> storage, std::string_view result) {
    Inputs in;
    std::vector<std::pair<const dsl::tensor_spec*, nb::ndarray<nb::ro>>> arrays;
    std::string implied_by;
    dsl::element_type implied = dsl::element_type::float32;
    std::vector<std::optional<dsl::element_type>> float_types;  // each float input's type as given, per array
    bool several_types = false;
    float_types.reserve(given.size());
    std::optional<std::string> disagreement;
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
        // A parameter (a scale, a cap, ALiBi's slopes) is float32 in every kernel: it implies no storage type.
        const bool stored = spec->dtype == dsl::element_type::float32 && !spec->is_parameter();
        const dsl::element_type t = stored ? storage_implied_by(arrays.back().second) : dsl::element_type::float32;
        float_types.push_back(stored ? std::optional(t) : std::nullopt);
        for (const auto& other : float_types)
            several_types = several_types || (other && float_types.back() && *other != *float_types.back());
        if (t == dsl::element_type::float32 || storage) continue;
        if (!implied_by.empty() && t != implied && !disagreement)
            disagreement = signature.name + ": inputs '" + implied_by + "' and '" + name +
                           "' imply different storage types (" + dsl::element_type_name(implied) + ", " +
                           dsl::element_type_name(t) + "); give dtype=";
        implied = t;
        implied_by = name;
    }
    const auto own = several_types && !result.empty()
                         ? own_types_kernel(variant, result, arrays, float_types, storage)
                         : std::nullopt;
    if (disagreement && !own) throw input_error(*disagreement);
    in.storage = own ? own->first : storage.value_or(implied);
    if (own) in.input_types = own->second;
    for (auto& [spec, array] : arrays) {
        const dsl::element_type type = spec->is_parameter() ? spec->dtype
                                       : own ? runtime::own_input_type(in.input_types, spec->name).value_or(in.storage)
                                             : in.storage;
        const BorrowedInput& held =
            in.held.emplace(spec->name, borrow_input(variant, *spec, std::move(array), type)).first->second;
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
    nb::gil_scoped_release unlocked;
    runtime::evaluate_into(kernel, inputs.views, out, options);
}

}  // namespace attnforge::python
