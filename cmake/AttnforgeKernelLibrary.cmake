# attnforge_add_kernel_library(<name> GENERATOR_SOURCES <file>... LIST <kernels.list>...
#                              VARIANTS_HEADER <header> VARIANTS_NAMESPACE <ns>)
#
# For a project that uses the installed package (find_package(attnforge)): generates the kernels of
# its own DSL variants ahead of time, with the same function as attnforge's own build
# (attnforge_add_kernels, the same catalogue program), and makes two libraries to link:
#   <name>         the attnforge runtime API (attnforge/runtime/run.hpp: run, select_kernel, ...) over
#                  those kernels: what a program ships (no Halide compiler, no interpreter)
#   <name>_engine  <name> plus the reference engine over the same variants (attnforge/runtime/engine.hpp:
#                  evaluate with the kernel or the float64 interpreter)
#
#   GENERATOR_SOURCES  a .cpp with ATTNFORGE_REGISTER_ATTENTION_GENERATOR(<ns>::<tuple of graphs>)
#   LIST               kernel lists, in generated/kernels.list's format
#   VARIANTS_HEADER    the header that defines the graphs (the registries include it)
#   VARIANTS_NAMESPACE the namespace of the graphs, e.g. my_project::variants
#
# Link one of them into one program or shared library: it carries the registries, which the runtime
# API reads.
include_guard(GLOBAL)
include(AttnforgeKernels)

function(attnforge_add_kernel_library name)
  cmake_parse_arguments(ARG "" "VARIANTS_HEADER;VARIANTS_NAMESPACE" "GENERATOR_SOURCES;LIST" ${ARGN})
  foreach(required IN ITEMS GENERATOR_SOURCES LIST VARIANTS_HEADER VARIANTS_NAMESPACE)
    if(NOT ARG_${required})
      message(FATAL_ERROR "attnforge_add_kernel_library(${name}): ${required} is required")
    endif()
  endforeach()
  add_halide_generator(${name}_generator SOURCES ${ARG_GENERATOR_SOURCES} LINK_LIBRARIES attnforge::codegen)
  add_halide_runtime(${name}_halide_runtime)
  cmake_path(ABSOLUTE_PATH ARG_VARIANTS_HEADER BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE header)
  attnforge_add_kernels(
    LIST ${ARG_LIST}
    GENERATOR ${name}_generator
    RUNTIME ${name}_halide_runtime
    VARIANTS_NAMESPACE ${ARG_VARIANTS_NAMESPACE}
    VARIANTS_INCLUDE "\"${header}\""
    REGISTRY_OUT registry
    REFERENCE_OUT reference
    LIBRARIES_OUT kernels)
  # The registries as objects linked straight into each consumer: the runtime API (a static library
  # after them on the link line) calls into them.
  add_library(${name}_registry OBJECT ${registry})
  target_link_libraries(${name}_registry PRIVATE attnforge::runtime_core ${kernels})
  add_library(${name} INTERFACE)
  target_sources(${name} INTERFACE $<TARGET_OBJECTS:${name}_registry>)
  target_link_libraries(${name} INTERFACE attnforge::runtime_core ${kernels} ${name}_halide_runtime)

  add_library(${name}_reference_registry OBJECT ${reference})
  target_link_libraries(${name}_reference_registry PRIVATE attnforge::engine_core)
  add_library(${name}_engine INTERFACE)
  target_sources(${name}_engine INTERFACE $<TARGET_OBJECTS:${name}_reference_registry>)
  target_link_libraries(${name}_engine INTERFACE ${name} attnforge::engine_core)
endfunction()
