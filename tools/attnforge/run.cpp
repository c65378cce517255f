// attnforge run VARIANT --input NAME=FILE.npy ... --output FILE.npy [--engine kernel|interpreter]
//               [--attention-weights FILE.npy] [--threads N]
// Everything is read, checked and computed before anything is written: on failure no output exists.
#include "commands.hpp"
#include "tensors.hpp"

#include <attnforge/errors.hpp>
#include <attnforge/interp/interpreter.hpp>
#include <attnforge/runtime/run.hpp>

#include <filesystem>
#include <ostream>

namespace attnforge::cli {

namespace {

struct Outputs {
    std::vector<std::int64_t> shape;
    std::vector<float> output;
    std::vector<std::int64_t> weights_shape;
    std::vector<float> weights;
};

std::vector<float> to_float32(const interp::Tensor& t) { return {t.data.begin(), t.data.end()}; }

}  // namespace

int run(const RunOptions& o, std::ostream& out, std::ostream& err) {
    try {
        if (o.engine != "kernel" && o.engine != "interpreter")
            throw input_error("--engine must be 'kernel' or 'interpreter', given '" + o.engine + "'");
        dsl::graph_signature sig;
        bool has_weights = false;
        if (!dsl::with_builtin_variant(o.variant, [&](const auto& g) {
                sig = dsl::signature(g);
                has_weights = dsl::has_attention_weights(g);
            })) {
            std::string known;
            for (std::string_view v : runtime::variants()) known += (known.empty() ? "" : ", ") + std::string(v);
            throw input_error("unknown variant '" + o.variant + "'; known: " + known);
        }
        if (!o.attention_weights.empty() && !has_weights)
            throw input_error(o.variant + " has no attention weights to write (--attention-weights)");
        auto same_file = [](const std::string& a, const std::string& b) {
            return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
        };
        if (!o.attention_weights.empty() && same_file(o.attention_weights, o.output))
            throw input_error("--attention-weights and --output name the same file");

        runtime::TensorMap inputs;
        for (const std::string& arg : o.inputs) {
            const auto eq = arg.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
                throw input_error("--input must be NAME=FILE.npy, given '" + arg + "'");
            const std::string name = arg.substr(0, eq), path = arg.substr(eq + 1);
            const dsl::tensor_spec* spec = nullptr;
            for (const auto& s : sig.inputs) spec = s.name == name ? &s : spec;
            if (!spec) {
                std::string names;
                for (const auto& s : sig.inputs) names += (names.empty() ? "" : ", ") + s.name + s.shape_symbol();
                throw input_error(o.variant + ": unexpected input '" + name + "'; it takes " + names);
            }
            if (inputs.count(name)) throw input_error("input '" + name + "' is given twice");
            inputs.emplace(name, load_input(name, path, spec->dtype, err));
        }

        Outputs result;
        if (o.engine == "kernel") {
            runtime::RunOptions ro;
            ro.threads = o.threads;
            const runtime::Tensor y = runtime::run(o.variant, inputs, ro);
            result.shape = y.shape;
            result.output = y.f32;
            if (!o.attention_weights.empty()) {
                ro.result = "attention_weights";
                const runtime::Tensor w = runtime::run(o.variant, inputs, ro);
                result.weights_shape = w.shape;
                result.weights = w.f32;
            }
        } else {
            const interp::TensorMap in64 = runtime::to_float64(inputs);
            dsl::with_builtin_variant(o.variant, [&](const auto& g) {
                const interp::Result r = interp::evaluate(g, in64, {.intermediates = !o.attention_weights.empty()});
                result.shape = r.output.shape;
                result.output = to_float32(r.output);
                if (!o.attention_weights.empty()) {
                    const interp::Tensor& w = r.intermediates.at("attention_weights");
                    result.weights_shape = w.shape;
                    result.weights = to_float32(w);
                }
            });
        }
        if (!o.attention_weights.empty()) io::write_npy(o.attention_weights, result.weights_shape, result.weights);
        io::write_npy(o.output, result.shape, result.output);
        out << "attnforge: " << o.variant << " (" << o.engine << ") wrote " << o.output << " "
            << interp::shape_string(result.shape) << "\n";
        return 0;
    } catch (const input_error& e) {
        err << "attnforge run: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        err << "attnforge run: error: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace attnforge::cli
