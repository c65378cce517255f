// attnforge run VARIANT --input NAME=FILE.npy ... --output FILE.npy [--engine kernel|interpreter]
//               [--attention-weights FILE.npy] [--logsumexp FILE.npy] [--threads N] [--dtype float32|bf16|fp16]
// Everything is read, checked and computed before anything is written: on failure no output exists.
#include "commands.hpp"
#include "exit_status.hpp"
#include "tensors.hpp"
#include <attnforge/errors.hpp>
#include <attnforge/interp/tensor.hpp>
#include <attnforge/runtime/engine.hpp>

#include <filesystem>
#include <ostream>
#include <vector>

namespace attnforge::cli {

int run(const RunOptions& o, std::ostream& out, std::ostream& err) {
    return with_exit_status("run", err, [&](std::ostream& warnings) {
        // Kernel or interpreter, through the registry (runtime/engine.hpp): the same look-up for a
        // downstream build's own variants.
        const runtime::Engine engine = runtime::parse_engine(o.engine);
        const dsl::graph_signature& sig = runtime::signature_of(o.variant);
        if (engine == runtime::Engine::kernel) runtime::first_kernel(o.variant, "output", o.dtype);  // has one in it
        // The extra results asked for: (option, result, file).
        struct Extra {
            const char* option;
            const char* result;
            const std::string& file;
        };
        std::vector<Extra> extras;
        for (const Extra& e : {Extra{"--attention-weights", "attention_weights", o.attention_weights},
                               Extra{"--logsumexp", "logsumexp", o.logsumexp}})
            if (!e.file.empty()) extras.push_back(e);
        auto same_file = [](const std::string& a, const std::string& b) {
            return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
        };
        for (std::size_t i = 0; i < extras.size(); ++i) {
            const Extra& e = extras[i];
            if (!runtime::result_spec_of(o.variant, e.result, o.dtype))
                throw input_error(o.variant + " has no " + e.result + (o.dtype == "float32" ? "" : " in " + o.dtype) +
                                  " to write (" + e.option + ")");
            if (same_file(e.file, o.output))
                throw input_error(std::string(e.option) + " and --output name the same file");
            for (std::size_t j = 0; j < i; ++j)
                if (same_file(e.file, extras[j].file))
                    throw input_error(std::string(e.option) + " and " + extras[j].option + " name the same file");
        }

        // Inputs in the storage type: float32 ones rounded to nearest even (docs/contract.md §4); the
        // interpreter then evaluates these rounded values.
        const runtime::TensorMap inputs = runtime::to_storage(load_inputs(o.variant, sig, o.inputs, warnings),
                                                              runtime::storage_type_named(o.dtype), sig);
        runtime::RunOptions ro;
        ro.threads = o.threads;
        ro.dtype = o.dtype;
        const runtime::Tensor y = runtime::to_float32(runtime::evaluate(o.variant, inputs, engine, ro));
        std::vector<runtime::Tensor> results;  // every one computed before anything is written
        for (const Extra& e : extras) {
            ro.result = e.result;
            results.push_back(runtime::to_float32(runtime::evaluate(o.variant, inputs, engine, ro)));
        }
        for (std::size_t i = 0; i < extras.size(); ++i) io::write_npy(extras[i].file, results[i].shape, results[i].f32);
        io::write_npy(o.output, y.shape, y.f32);
        out << "attnforge: " << o.variant << " (" << o.engine << ") wrote " << o.output << " "
            << interp::shape_string(y.shape) << "\n";
        return 0;
    });
}

}  // namespace attnforge::cli
