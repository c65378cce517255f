// attnforge run VARIANT --input NAME=FILE.npy ... --output FILE.npy [--engine kernel|interpreter]
//               [--attention-weights FILE.npy] [--threads N]
// Everything is read, checked and computed before anything is written: on failure no output exists.
#include "commands.hpp"
#include "exit_status.hpp"
#include "tensors.hpp"
#include <attnforge/errors.hpp>
#include <attnforge/interp/tensor.hpp>
#include <attnforge/runtime/engine.hpp>

#include <filesystem>
#include <ostream>

namespace attnforge::cli {

int run(const RunOptions& o, std::ostream& out, std::ostream& err) {
    return with_exit_status("run", err, [&](std::ostream& warnings) {
        // Kernel or interpreter, through the registry (runtime/engine.hpp): the same look-up for a
        // downstream build's own variants.
        const runtime::Engine engine = runtime::parse_engine(o.engine);
        const dsl::graph_signature& sig = runtime::signature_of(o.variant);
        if (!o.attention_weights.empty() && !runtime::attention_weights_of(o.variant))
            throw input_error(o.variant + " has no attention weights to write (--attention-weights)");
        auto same_file = [](const std::string& a, const std::string& b) {
            return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
        };
        if (!o.attention_weights.empty() && same_file(o.attention_weights, o.output))
            throw input_error("--attention-weights and --output name the same file");

        const runtime::TensorMap inputs = load_inputs(o.variant, sig, o.inputs, warnings);
        runtime::RunOptions ro;
        ro.threads = o.threads;
        const runtime::Tensor y = runtime::evaluate(o.variant, inputs, engine, ro);
        runtime::Tensor w;
        if (!o.attention_weights.empty()) {
            ro.result = "attention_weights";
            w = runtime::evaluate(o.variant, inputs, engine, ro);
        }
        if (!o.attention_weights.empty()) io::write_npy(o.attention_weights, w.shape, w.f32);
        io::write_npy(o.output, y.shape, y.f32);
        out << "attnforge: " << o.variant << " (" << o.engine << ") wrote " << o.output << " "
            << interp::shape_string(y.shape) << "\n";
        return 0;
    });
}

}  // namespace attnforge::cli
