# attnforge_add_kernels(LIST <file> GENERATOR <target> RUNTIME <target> REGISTRY_OUT <var> LIBRARIES_OUT <var>)
#
# Reads the kernel list (generated/kernels.list): one add_halide_library per line, all on one shared
# Halide runtime; returns the registry entries (C++ initializers) and the kernel library targets.
#
# Options:
#   ATTNFORGE_KERNEL_TARGETS  Halide target(s) for every kernel. "host" (default) is the build machine;
#                             a CMake list (e.g. the ATTNFORGE_MULTITARGET preset) builds one variant
#                             per target with run-time dispatch to the first the CPU supports.
#   ATTNFORGE_EMIT_STMT       also write Halide's statement (.stmt.html) and assembly (.s) files
#                             next to each kernel, for inspection.
function(attnforge_add_kernels)
  cmake_parse_arguments(ARG "" "LIST;GENERATOR;RUNTIME;REGISTRY_OUT;INCLUDES_OUT;LIBRARIES_OUT" "" ${ARGN})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARG_LIST})
  file(STRINGS ${ARG_LIST} lines)
  set(entries "")
  set(includes "")
  set(libraries "")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    separate_arguments(fields UNIX_COMMAND "${line}")
    list(LENGTH fields n)
    if(n LESS 4)
      message(FATAL_ERROR "${ARG_LIST}: a kernel line needs variant, result, strategy and sizes: '${line}'")
    endif()
    list(GET fields 0 variant)
    list(GET fields 1 result)
    list(GET fields 2 strategy)
    list(GET fields 3 sizes)
    set(knobs "")
    if(n GREATER 4)
      list(SUBLIST fields 4 -1 knobs)
    endif()
    if(result STREQUAL "output")
      set(name "${variant}__${strategy}")
    else()
      set(name "${variant}__${result}")
    endif()
    if(NOT sizes STREQUAL "any")
      string(REGEX REPLACE "[^A-Za-z0-9]+" "_" size_suffix "${sizes}")
      set(name "${name}__${size_suffix}")
    endif()
    set(target attnforge_kernel_${name})
    set(extra "")
    if(ATTNFORGE_EMIT_STMT)
      set(extra STMT_HTML ${target}.stmt.html ASSEMBLY ${target}.s)
    endif()
    add_halide_library(${target}
      FROM ${ARG_GENERATOR}
      GENERATOR attnforge_attention
      FUNCTION_NAME ${target}
      TARGETS ${ATTNFORGE_KERNEL_TARGETS}
      PARAMS variant=${variant} result=${result} strategy=${strategy} ${knobs}
      USE_RUNTIME ${ARG_RUNTIME}
      ${extra})
    list(JOIN knobs " " knob_text)
    string(APPEND includes "#include <${target}.h>\n")
    string(APPEND entries
      "    {\"${name}\", \"${variant}\", \"${result}\", \"${strategy}\", \"${sizes}\", \"${knob_text}\",\n"
      "     &${target}_argv, &${target}_metadata,\n"
      "     [] { return dsl::signature(dsl::variants::${variant}); },\n"
      "     [] { return ${result}_spec(dsl::variants::${variant}); },\n"
      "     [] { return dsl::attention_weights_spec(dsl::variants::${variant}); }},\n")
    list(APPEND libraries ${target})
  endforeach()
  set(${ARG_REGISTRY_OUT} "${entries}" PARENT_SCOPE)
  set(${ARG_INCLUDES_OUT} "${includes}" PARENT_SCOPE)
  set(${ARG_LIBRARIES_OUT} "${libraries}" PARENT_SCOPE)
endfunction()
