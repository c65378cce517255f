#include "tensors.hpp"

#include <attnforge/errors.hpp>
#include <attnforge/runtime/input_conversion.hpp>

#include <algorithm>
#include <cstdint>

#include <ostream>

namespace attnforge::cli {

namespace {

using runtime::GivenType;

GivenType given_type(io::npy_dtype t) {
    switch (t) {
        case io::npy_dtype::float32: return GivenType::float32;
        case io::npy_dtype::float64: return GivenType::float64;
        case io::npy_dtype::boolean: return GivenType::boolean;
        case io::npy_dtype::uint8: return GivenType::uint8;
        case io::npy_dtype::int32: return GivenType::int32;
        case io::npy_dtype::float16: return GivenType::float16;
        case io::npy_dtype::int8:
            return GivenType::int8;
    }
    return GivenType::other;
}

// A type as a .npy file holds it, "float32 '<f4'"; "" for those .npy has no descriptor for (bf16).
std::string npy_text(GivenType t) {
    switch (t) {
        case GivenType::float32: return "float32 '<f4'";
        case GivenType::float64: return "float64 '<f8'";
        case GivenType::float16: return "float16 '<f2'";
        case GivenType::boolean: return "bool '|b1'";
        case GivenType::uint8: return "uint8 '|u1'";
        case GivenType::int8: return "int8 '|i1'";
        case GivenType::int32: return "int32 '<i4'";
        default: return "";
    }
}

}  // namespace

runtime::Tensor load_input(const std::string& name, const std::string& path, dsl::element_type expected,
                           std::ostream& warnings) {
    const io::NpyArray a = [&] {
        try {
            return io::read_npy(path);
        } catch (const input_error& e) {
            throw input_error("input '" + name + "': " + e.what());
        }
    }();
    // The rules of docs/contract.md §4 (runtime/input_conversion.hpp). A float tensor is read as float32 (a
    // '<f2' file exactly): the rounding to a kernel's storage type comes later (runtime::to_storage).
    const GivenType given = given_type(a.dtype);
    const std::string what = "input '" + name + "' (" + path + ")";
    if (!runtime::takes(expected, given))
        throw input_error(what + " must be " + runtime::taken_text(expected, npy_text) + ", given " + npy_text(given));
    if (given == GivenType::float64 && expected == dsl::element_type::float32)
        warnings << "attnforge: warning: " << what << " is float64; converting to float32\n";
    const auto n = static_cast<std::size_t>(a.element_count());
    std::vector<std::uint8_t> values(std::max<std::size_t>(n, 1) * runtime::item_bytes(expected));
    runtime::convert_elements(reinterpret_cast<const std::uint8_t*>(a.bytes.data()), given, n, expected, values.data(),
                              what);
    return runtime::copy_of(runtime::TensorView{a.shape, expected, values.data()});
}

runtime::TensorMap load_inputs(const std::string& variant, const dsl::graph_signature& sig,
                               const std::vector<std::string>& args, std::ostream& warnings) {
    runtime::TensorMap inputs;
    for (const std::string& arg : args) {
        const auto eq = arg.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
            throw input_error("--input must be NAME=FILE.npy, given '" + arg + "'");
        const std::string name = arg.substr(0, eq), path = arg.substr(eq + 1);
        const dsl::tensor_spec* spec = nullptr;
        for (const auto& s : sig.inputs) spec = s.name == name ? &s : spec;
        if (!spec) {
            std::string names;
            for (const auto& s : sig.inputs) names += (names.empty() ? "" : ", ") + s.name + s.shape_symbol();
            throw input_error(variant + ": unexpected input '" + name + "'; it takes " + names);
        }
        if (inputs.count(name)) throw input_error("input '" + name + "' is given twice");
        inputs.emplace(name, load_input(name, path, spec->dtype, warnings));
    }
    return inputs;
}

}  // namespace attnforge::cli
