// attnforge run VARIANT --input NAME=FILE.npy ... --output FILE.npy [--engine kernel|interpreter]
//               [--attention-weights FILE.npy] [--threads N]
// Everything is read, checked and computed before anything is written: on failure no output exists.
#include "commands.hpp"
#include "exit_status.hpp"
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

std::vector<float> to_float32(const interp::Tensor& t) {
    return {t.data.begin(), t.data.end()};
}

}  // namespace

int run(const RunOptions& o, std::ostream& out, std::ostream& err) {
    return with_exit_status("run", err, [&] {
        if (o.engine != "kernel" && o.engine != "interpreter")
            throw input_error("--engine must be 'kernel' or 'interpreter', given '" + o.engine + "'");
        const dsl::graph_signature sig = variant_signature(o.variant);
        const bool has_weights = !attention_weights_of(o.variant).dims.empty();
        if (!o.attention_weights.empty() && !has_weights)
            throw input_error(o.variant + " has no attention weights to write (--attention-weights)");
        auto same_file = [](const std::string& a, const std::string& b) {
            return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
        };
        if (!o.attention_weights.empty() && same_file(o.attention_weights, o.output))
            throw input_error("--attention-weights and --output name the same file");

        const runtime::TensorMap inputs = load_inputs(o.variant, sig, o.inputs, err);

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
    });
}

}  // namespace attnforge::cli
