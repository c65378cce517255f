# attnforge_add_kernels(LIST <file>... [RECORDS <jsonl> PROBE <json file> THREADS <n>]
#                       GENERATOR <target> RUNTIME <target> [VARIANTS_NAMESPACE <ns>] [VARIANTS_INCLUDE <arg>]
#                       REGISTRY_OUT <var> REFERENCE_OUT <var> LIBRARIES_OUT <var>)
#
# The one function that turns kernel lists into kernels, here and in projects that use the installed
# package (cmake/AttnforgeKernelLibrary.cmake). The catalogue program (catalogue/, run by
# cmake/AttnforgeCatalogue.cmake) reads the lists (and tuning records where given) and writes one
# attnforge_kernel(...) call per kernel and the registry sources; this file only defines that call:
# an add_halide_library of GENERATOR's attnforge_attention generator, on the shared Halide RUNTIME.
# Returns the paths of the kernel registry and the reference registry sources, and the kernel targets.
#
# Options:
#   ATTNFORGE_KERNEL_TARGETS  Halide target(s) for every kernel. "host" (default) is the build machine;
#                             a CMake list (e.g. the ATTNFORGE_MULTITARGET preset) builds one variant
#                             per target with run-time dispatch to the first the CPU supports.
#   ATTNFORGE_EMIT_STMT       also write Halide's statement (.stmt.html) and assembly (.s) files
#                             next to each kernel, for inspection.
include_guard(GLOBAL)
include(AttnforgeCatalogue)

# attnforge_kernel(<name> [AUTOSCHEDULER <adams2019|mullapudi2016|li2018>] PARAMS <param=value>...)
# Called by the catalogue's CMake include, inside attnforge_add_kernels (whose arguments it reads).
function(attnforge_kernel name)
  cmake_parse_arguments(K "" "AUTOSCHEDULER" "PARAMS" ${ARGN})
  set(target attnforge_kernel_${name})
  set(extra "")
  if(K_AUTOSCHEDULER)
    set(plugins adams2019 Halide::Adams2019 mullapudi2016 Halide::Mullapudi2016 li2018 Halide::Li2018)
    list(FIND plugins ${K_AUTOSCHEDULER} at)
    math(EXPR at "${at} + 1")
    list(GET plugins ${at} plugin)
    list(APPEND extra AUTOSCHEDULER ${plugin})
  endif()
  if(ATTNFORGE_EMIT_STMT)
    list(APPEND extra STMT_HTML ${target}.stmt.html ASSEMBLY ${target}.s)
  endif()
  add_halide_library(${target}
    FROM ${ARG_GENERATOR}
    GENERATOR attnforge_attention
    FUNCTION_NAME ${target}
    TARGETS ${ATTNFORGE_KERNEL_TARGETS}
    PARAMS ${K_PARAMS}
    USE_RUNTIME ${ARG_RUNTIME}
    ${extra})
  set(kernel_targets ${kernel_targets} ${target} PARENT_SCOPE)
endfunction()

function(attnforge_add_kernels)
  cmake_parse_arguments(ARG "" "GENERATOR;RUNTIME;REGISTRY_OUT;REFERENCE_OUT;LIBRARIES_OUT;VARIANTS_NAMESPACE;VARIANTS_INCLUDE;RECORDS;PROBE;THREADS"
                        "LIST" ${ARGN})
  if(NOT ATTNFORGE_KERNEL_TARGETS)  # a project of its own: the build machine, as attnforge's default
    set(ATTNFORGE_KERNEL_TARGETS host)
  endif()
  set(lists "")
  foreach(list_file IN LISTS ARG_LIST)  # relative to the calling directory, as CMake reads files
    cmake_path(ABSOLUTE_PATH list_file BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND lists ${list_file})
  endforeach()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/catalogue)
  file(MAKE_DIRECTORY ${out})
  set(forward "")
  foreach(option IN ITEMS RECORDS PROBE THREADS VARIANTS_NAMESPACE VARIANTS_INCLUDE)
    if(ARG_${option})
      list(APPEND forward ${option} "${ARG_${option}}")
    endif()
  endforeach()
  attnforge_run_catalogue(LIST ${lists} ${forward} CMAKE_OUT ${out}/kernels.cmake
                          REGISTRY_OUT ${out}/kernel_registry.cpp REFERENCE_OUT ${out}/reference_registry.cpp)
  set(kernel_targets "")
  include(${out}/kernels.cmake)
  set(${ARG_REGISTRY_OUT} ${out}/kernel_registry.cpp PARENT_SCOPE)
  set(${ARG_REFERENCE_OUT} ${out}/reference_registry.cpp PARENT_SCOPE)
  set(${ARG_LIBRARIES_OUT} ${kernel_targets} PARENT_SCOPE)
endfunction()
