# attnforge_add_kernels(LIST <file>... [TUNED_LINES <line>...] GENERATOR <target> RUNTIME <target>
#                       [VARIANTS_NAMESPACE <ns>] REGISTRY_OUT <var> INCLUDES_OUT <var> LIBRARIES_OUT <var>)
#
# The one function that turns kernel lists into kernels, here and in projects that use the installed
# package (cmake/AttnforgeKernelLibrary.cmake). GENERATOR is an executable registering
# ATTNFORGE_REGISTER_ATTENTION_GENERATOR for the list's variants, which live in namespace
# VARIANTS_NAMESPACE (default attnforge::dsl::variants).
#
# Reads the kernel lists (generated/kernels.list, then generated/baselines.list where asked): one
# add_halide_library per line, all on one shared Halide runtime; returns the registry entries (C++
# initializers, in list order) and the kernel library targets. TUNED_LINES (cmake/AttnforgeTuning.cmake,
# from tuning records) go before the first line of their variant and result, so that the rule prefers
# them in their size bucket; their "@record=<id>" field names the record. The strategies `adams2019`,
# `mullapudi2016` and `li2018` run the unscheduled pipeline through that Halide autoscheduler. A line
# with the knob `block_mask=1` (streaming, a graph with run-time masks) also gets its pre-pass
# kernel, <name>__block_ranges, which the runtime calls first (runtime/src/run.cpp).
#
# Options:
#   ATTNFORGE_KERNEL_TARGETS  Halide target(s) for every kernel. "host" (default) is the build machine;
#                             a CMake list (e.g. the ATTNFORGE_MULTITARGET preset) builds one variant
#                             per target with run-time dispatch to the first the CPU supports.
#   ATTNFORGE_EMIT_STMT       also write Halide's statement (.stmt.html) and assembly (.s) files
#                             next to each kernel, for inspection.
function(attnforge_add_kernels)
  cmake_parse_arguments(ARG "" "GENERATOR;RUNTIME;REGISTRY_OUT;INCLUDES_OUT;LIBRARIES_OUT;VARIANTS_NAMESPACE" "LIST;TUNED_LINES" ${ARGN})
  if(NOT ARG_VARIANTS_NAMESPACE)
    set(ARG_VARIANTS_NAMESPACE attnforge::dsl::variants)
  endif()
  set(ns "::${ARG_VARIANTS_NAMESPACE}")
  if(NOT ATTNFORGE_KERNEL_TARGETS)  # a project of its own: the build machine, as attnforge's default
    set(ATTNFORGE_KERNEL_TARGETS host)
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARG_LIST})
  set(lines "")
  foreach(list_file IN LISTS ARG_LIST)
    # A ';' would split a line in two (CMake lists), even inside a comment: refuse it with its place.
    file(READ ${list_file} list_text)
    if(list_text MATCHES ";")
      message(FATAL_ERROR "${list_file}: contains ';', which CMake would read as a line break; remove it")
    endif()
    file(STRINGS ${list_file} list_lines)
    list(APPEND lines ${list_lines})
  endforeach()
  # (variant, result) pairs whose streaming kernel has the block-mask pre-pass: a tuned streaming
  # kernel of theirs keeps it (the tuner tunes without it: its candidates do not take the extra input).
  set(block_masked "")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" stripped)
    if(NOT stripped MATCHES "^#" AND " ${stripped} " MATCHES " block_mask=1 ")
      separate_arguments(fields UNIX_COMMAND "${stripped}")
      list(GET fields 0 v)
      list(GET fields 1 r)
      list(GET fields 2 st)
      if(st STREQUAL "streaming")
        list(APPEND block_masked "${v}/${r}")
      endif()
    endif()
  endforeach()
  # Tuned lines first for their (variant, result).
  set(merged "")
  set(placed "")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" stripped)
    if(NOT stripped STREQUAL "" AND NOT stripped MATCHES "^#")
      separate_arguments(fields UNIX_COMMAND "${stripped}")
      list(GET fields 0 v)
      list(GET fields 1 r)
      set(index 0)
      foreach(tuned IN LISTS ARG_TUNED_LINES)
        separate_arguments(tuned_fields UNIX_COMMAND "${tuned}")
        list(GET tuned_fields 0 tv)
        list(GET tuned_fields 1 tr)
        if(tv STREQUAL v AND tr STREQUAL r AND NOT index IN_LIST placed)
          list(GET tuned_fields 2 ts)
          if(ts STREQUAL "streaming" AND "${v}/${r}" IN_LIST block_masked)
            string(APPEND tuned " block_mask=1")
          endif()
          list(APPEND merged "${tuned}")
          list(APPEND placed ${index})
        endif()
        math(EXPR index "${index} + 1")
      endforeach()
    endif()
    list(APPEND merged "${line}")
  endforeach()
  set(index 0)
  foreach(tuned IN LISTS ARG_TUNED_LINES)
    if(NOT index IN_LIST placed)
      message(NOTICE "attnforge: note: tuned kernel '${tuned}' has no line of its variant and result in the kernel list: not built")
    endif()
    math(EXPR index "${index} + 1")
  endforeach()
  set(lines "${merged}")
  cmake_host_system_information(RESULT cores QUERY NUMBER_OF_PHYSICAL_CORES)
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
    set(schedule "default")
    foreach(knob IN LISTS knobs)
      if(knob MATCHES "^@record=(.+)$")
        set(schedule "tuned, record ${CMAKE_MATCH_1}")
        list(REMOVE_ITEM knobs "${knob}")
      endif()
    endforeach()
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
    set(params strategy=${strategy})
    if(strategy MATCHES "^(adams2019|mullapudi2016|li2018)$")
      # The unscheduled pipeline, scheduled by one of Halide's autoschedulers (its default search) for
      # this machine's core count: baselines, or a tuning record's winner.
      set(params strategy=unscheduled autoscheduler.parallelism=${cores})
      set(plugins adams2019 Halide::Adams2019 mullapudi2016 Halide::Mullapudi2016 li2018 Halide::Li2018)
      list(FIND plugins ${strategy} at)
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
      PARAMS variant=${variant} result=${result} ${params} ${knobs}
      USE_RUNTIME ${ARG_RUNTIME}
      ${extra})
    set(prepass "nullptr, nullptr")
    if("block_mask=1" IN_LIST knobs)
      # The pre-pass: the same query and key blocks (knobs), the ranges of live key blocks as output.
      set(prepass_knobs ${knobs})
      list(REMOVE_ITEM prepass_knobs "block_mask=1")
      add_halide_library(${target}__block_ranges
        FROM ${ARG_GENERATOR}
        GENERATOR attnforge_attention
        FUNCTION_NAME ${target}__block_ranges
        TARGETS ${ATTNFORGE_KERNEL_TARGETS}
        PARAMS variant=${variant} result=block_ranges strategy=streaming ${prepass_knobs}
        USE_RUNTIME ${ARG_RUNTIME})
      string(APPEND includes "#include <${target}__block_ranges.h>\n")
      list(APPEND libraries ${target}__block_ranges)
      set(prepass "&${target}__block_ranges_argv, &${target}__block_ranges_metadata")
    endif()
    list(JOIN knobs " " knob_text)
    string(APPEND includes "#include <${target}.h>\n")
    string(APPEND entries
      "    {\"${name}\", \"${variant}\", \"${result}\", \"${strategy}\", \"${sizes}\", \"${knob_text}\", \"${schedule}\",\n"
      "     &${target}_argv, &${target}_metadata, ${prepass},\n"
      "     []() -> const dsl::graph_signature& { static const auto s = dsl::signature(${ns}::${variant}); return s; },\n"
      "     []() -> const dsl::tensor_spec& { static const auto s = ${result}_spec(${ns}::${variant}); return s; },\n"
      "     []() -> const dsl::tensor_spec& { static const auto s = dsl::attention_weights_spec(${ns}::${variant}); return s; },\n"
      "     [](const dsl::FlopSizes& s) { return dsl::flop_count(${ns}::${variant}, s); },\n"
      "     [](const interp::TensorMap& in) { return interpret_${result}(${ns}::${variant}, in); }},\n")
    list(APPEND libraries ${target})
  endforeach()
  set(${ARG_REGISTRY_OUT} "${entries}" PARENT_SCOPE)
  set(${ARG_INCLUDES_OUT} "${includes}" PARENT_SCOPE)
  set(${ARG_LIBRARIES_OUT} "${libraries}" PARENT_SCOPE)
endfunction()
