# attnforge_add_kernel_library(<name> GENERATOR_SOURCES <file>... LIST <kernels.list>...
#                              VARIANTS_HEADER <header> VARIANTS_NAMESPACE <ns>)
#
# For a project that uses the installed package (find_package(attnforge)): generates the kernels of
# its own DSL variants ahead of time, with the same function as attnforge's own build
# (attnforge_add_kernels), and makes <name>, a library to link that gives the attnforge runtime API
# (attnforge/runtime/run.hpp: run, select_kernel, run_kernel, ...) over those kernels.
#
#   GENERATOR_SOURCES  a .cpp with ATTNFORGE_REGISTER_ATTENTION_GENERATOR(<ns>::<tuple of graphs>)
#   LIST               kernel lists, in generated/kernels.list's format
#   VARIANTS_HEADER    the header that defines the graphs (the registry includes it)
#   VARIANTS_NAMESPACE the namespace of the graphs, e.g. my_project::variants
#
# Link <name> into one program or shared library: it carries the registry, which the runtime API reads.
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
  attnforge_add_kernels(
    LIST ${ARG_LIST}
    GENERATOR ${name}_generator
    RUNTIME ${name}_halide_runtime
    VARIANTS_NAMESPACE ${ARG_VARIANTS_NAMESPACE}
    REGISTRY_OUT ATTNFORGE_KERNEL_ENTRIES
    INCLUDES_OUT ATTNFORGE_KERNEL_INCLUDES
    LIBRARIES_OUT kernels)
  cmake_path(ABSOLUTE_PATH ARG_VARIANTS_HEADER BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE header)
  set(ATTNFORGE_VARIANTS_INCLUDE "#include \"${header}\"")
  # The registry's template: next to this file when installed; attnforge's own build points
  # _attnforge_registry_template at the source tree's.
  set(template "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/registry.cpp.in")
  if(_attnforge_registry_template)
    set(template "${_attnforge_registry_template}")
  endif()
  configure_file(${template} ${CMAKE_CURRENT_BINARY_DIR}/${name}_registry.cpp @ONLY)
  # The registry as objects linked straight into each consumer: the runtime API (a static library
  # after it on the link line) calls into it.
  add_library(${name}_registry OBJECT ${CMAKE_CURRENT_BINARY_DIR}/${name}_registry.cpp)
  target_link_libraries(${name}_registry PRIVATE attnforge::runtime_core ${kernels})
  add_library(${name} INTERFACE)
  target_sources(${name} INTERFACE $<TARGET_OBJECTS:${name}_registry>)
  target_link_libraries(${name} INTERFACE attnforge::runtime_core ${kernels} ${name}_halide_runtime)
endfunction()
