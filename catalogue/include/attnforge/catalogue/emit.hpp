// What the catalogue program writes for a build: the CMake include that makes every kernel (one
// attnforge_kernel(...) call each, cmake/AttnforgeKernels.cmake), the kernel registry the runtime
// reads (runtime/registry.hpp) and the reference registry of the interpreter engine
// (runtime/reference.hpp). All three from one Catalogue, so build and registries cannot drift.
#pragma once

#include <attnforge/catalogue/catalogue.hpp>

#include <string>

namespace attnforge::catalogue {

struct EmitOptions {
    std::string variants_namespace = "attnforge::dsl::variants";  // where the graphs live
    std::string variants_include;  // an #include line for their header ("" where dsl.hpp has them)
    int parallelism = 1;           // the autoschedulers' core count
    std::string source;            // what the files were made from, for their first line
};

std::string cmake_include(const Catalogue& c, const EmitOptions& o);
std::string kernel_registry_source(const Catalogue& c, const EmitOptions& o);
std::string reference_registry_source(const Catalogue& c, const EmitOptions& o);

// Writes text to path unless the file already holds exactly it (an unchanged registry is not
// recompiled after a reconfigure); throws std::runtime_error when it cannot.
void write_if_changed(const std::string& path, const std::string& text);

}  // namespace attnforge::catalogue
