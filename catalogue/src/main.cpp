// attnforge-catalogue: run by CMake at configure time (cmake/AttnforgeCatalogue.cmake). Reads the kernel
// lists and, where given, the tuning records with the probe's facts of this build; writes the CMake
// include that makes the kernels and the two registry sources. Prints one line per note, warning or
// tuned kernel ("note: ...", "warning: ...", "tuned: ...") for CMake to show; an error in a list is
// one line on stderr and exit status 1, which stops the configure.
#include <attnforge/catalogue/catalogue.hpp>
#include <attnforge/catalogue/emit.hpp>

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <iterator>

int main(int argc, char** argv) {
    namespace cat = attnforge::catalogue;
    CLI::App app{"attnforge-catalogue: kernel lists and tuning records -> kernels.cmake and registries"};
    std::vector<std::string> lists;
    std::string records, probe, halide, attnforge, cmake_out, registry_out, reference_out;
    int threads = 0;
    cat::EmitOptions emit;
    app.add_option("--list", lists, "a kernel list (repeat: lines in this order)")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_option("--records", records, "tuning records (generated/tuning_records.jsonl)");
    app.add_option("--probe", probe, "the probe's JSON (tools/tune/tuning_probe.cpp): needed with --records");
    app.add_option("--halide-version", halide);
    app.add_option("--attnforge-version", attnforge);
    app.add_option("--threads", threads, "the thread count records must be tuned for");
    app.add_option("--parallelism", emit.parallelism, "cores the autoschedulers plan for")->check(CLI::PositiveNumber);
    app.add_option("--variants-namespace", emit.variants_namespace);
    app.add_option("--variants-include", emit.variants_include, "e.g. '\"/path/my_variants.hpp\"'");
    app.add_option("--cmake-out", cmake_out)->required();
    app.add_option("--registry-out", registry_out)->required();
    app.add_option("--reference-out", reference_out)->required();
    CLI11_PARSE(app, argc, argv);
    try {
        std::vector<cat::KernelLine> listed;
        for (const auto& path : lists) {
            auto lines = cat::read_kernel_list(path);
            listed.insert(listed.end(), lines.begin(), lines.end());
            emit.source += (emit.source.empty() ? "" : ", ") + path.substr(path.find_last_of('/') + 1);
        }
        cat::TunedLines tuned;
        if (!records.empty()) {
            std::ifstream in(probe);
            if (!in) throw std::runtime_error("--records needs --probe, a readable file; given '" + probe + "'");
            const std::string probe_json(std::istreambuf_iterator<char>(in), {});
            tuned = cat::select_tuned_lines(cat::read_database(records),
                                            cat::facts_from_probe(probe_json, halide, attnforge, threads));
            emit.source += ", " + records.substr(records.find_last_of('/') + 1);
        }
        const cat::Catalogue c = cat::assemble(listed, tuned.lines);
        for (const auto& w : tuned.warnings) std::cout << "warning: " << w << "\n";
        for (const auto& n : tuned.notes) std::cout << "note: " << n << "\n";
        for (const auto& n : c.notes) std::cout << "note: " << n << "\n";
        for (const auto& k : c.kernels)
            if (!k.line.record.empty())
                std::cout << "tuned: " << k.line.variant << " " << k.line.result << " " << k.line.strategy << " "
                          << k.line.sizes << " " << k.line.knob_text() << " @record=" << k.line.record << "\n";
        cat::write_if_changed(cmake_out, cat::cmake_include(c, emit));
        cat::write_if_changed(registry_out, cat::kernel_registry_source(c, emit));
        cat::write_if_changed(reference_out, cat::reference_registry_source(c, emit));
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
