#include "tensors.hpp"

#include <attnforge/errors.hpp>

#include <cmath>
#include <cstring>
#include <ostream>

namespace attnforge::cli {

namespace {
std::string dtype_text(io::npy_dtype t) {
    switch (t) {
        case io::npy_dtype::float32:
            return "float32 '<f4'";
        case io::npy_dtype::float64:
            return "float64 '<f8'";
        case io::npy_dtype::boolean:
            return "bool '|b1'";
        case io::npy_dtype::int32:
            return "int32 '<i4'";
        case io::npy_dtype::float16:
            return "float16 '<f2'";
        default:
            return "uint8 '|u1'";
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
    const auto n = static_cast<std::size_t>(a.element_count());
    if (expected == dsl::element_type::boolean) {
        if (a.dtype != io::npy_dtype::boolean && a.dtype != io::npy_dtype::uint8)
            throw input_error("input '" + name + "' (" + path + ") must be a bool '|b1' or uint8 '|u1' mask, given " +
                              dtype_text(a.dtype));
        runtime::Tensor t = runtime::Tensor::boolean(a.shape);
        for (std::size_t i = 0; i < n; ++i) t.u8[i] = std::to_integer<std::uint8_t>(a.bytes[i]) != 0 ? 1 : 0;
        return t;
    }
    if (expected == dsl::element_type::int32) {
        // Index inputs (docs/contract.md §4): int32, or float32 (float64) holding whole numbers.
        const interp::Tensor values = [&] {
            if (a.dtype == io::npy_dtype::int32 || a.dtype == io::npy_dtype::float32 || a.dtype == io::npy_dtype::float64)
                return io::to_tensor(a);
            throw input_error("input '" + name + "' (" + path + ") must be int32 '<i4' (or float32 holding whole "
                              "numbers), given " + dtype_text(a.dtype));
        }();
        runtime::Tensor t = runtime::Tensor::int32(a.shape);
        for (std::size_t i = 0; i < n; ++i)
            t.i32[i] = dsl::index_value(values.data[i], "input '" + name + "' (" + path + ")", i);
        return t;
    }
    if (a.dtype == io::npy_dtype::float32) {
        runtime::Tensor t = runtime::Tensor::float32(a.shape);
        if (n) std::memcpy(t.f32.data(), a.bytes.data(), n * sizeof(float));
        return t;
    }
    if (a.dtype == io::npy_dtype::float16) {
        // fp16 values, exact in float32 (an fp16 kernel's inputs: to_storage gives back the same bits).
        runtime::Tensor t = runtime::Tensor::float32(a.shape);
        const interp::Tensor values = io::to_tensor(a);
        for (std::size_t i = 0; i < n; ++i) t.f32[i] = static_cast<float>(values.data[i]);
        return t;
    }
    if (a.dtype == io::npy_dtype::float64) {
        warnings << "attnforge: warning: input '" << name << "' (" << path << ") is float64; converting to float32\n";
        runtime::Tensor t = runtime::Tensor::float32(a.shape);
        for (std::size_t i = 0; i < n; ++i) {
            double v;
            std::memcpy(&v, a.bytes.data() + 8 * i, 8);
            t.f32[i] = static_cast<float>(v);
        }
        return t;
    }
    throw input_error("input '" + name + "' (" + path + ") must be float32 '<f4' (or float16 '<f2'), given " +
                      dtype_text(a.dtype));
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
