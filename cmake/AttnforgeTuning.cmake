# Tuning records -> tuned kernel lines, at configure time.
#
# generated/tuning_records.jsonl (written by `attnforge tune`, one JSON record per line) says, per
# (variant, result, size bucket), which schedule measured fastest on some machine. This module picks,
# for each (variant, result, size bucket), the newest record that applies to this build and turns it
# into a kernel line placed before that variant's lines of generated/kernels.list (so the runtime's
# rule prefers it for key lengths in its bucket):
#
#   <variant> <result> <strategy> <bucket> <knobs...> @record=<id>
#
# A record applies when its target (Halide's host target string, features included), CPU model,
# Halide version, attnforge version, thread count (ATTNFORGE_TUNING_THREADS) and the variant's
# canonical DSL text all equal this build's; any other record is ignored with a note. A line that is
# not a readable record gives a warning and is skipped: a corrupt database never fails the build.
# Re-configuring happens whenever the database changes; only kernels whose line changed are
# regenerated (their generator command changed).

# attnforge_select_tuning_records(DATABASE <file> PROBE <json> HALIDE_VERSION <v> ATTNFORGE_VERSION <v>
#                                  THREADS <n> OUT_LINES <var> OUT_NOTES <var>)
# The selection alone, from a probe (the JSON tools/tune/tuning_probe.cpp prints): callable in script
# mode, which the tests do.
function(attnforge_select_tuning_records)
  cmake_parse_arguments(ARG "" "DATABASE;PROBE;HALIDE_VERSION;ATTNFORGE_VERSION;THREADS;OUT_LINES;OUT_NOTES" "" ${ARGN})
  set(notes "")
  set(keys "")
  string(JSON here_target GET "${ARG_PROBE}" target)
  string(JSON here_cpu GET "${ARG_PROBE}" cpu)
  file(READ "${ARG_DATABASE}" text)
  # One record per line; a ';' inside one would split it (CMake lists): protect it first.
  string(REPLACE ";" "\\;" text "${text}")
  string(REPLACE "\n" ";" records "${text}")
  set(number 0)
  foreach(record IN LISTS records)
    math(EXPR number "${number} + 1")
    if(record MATCHES "^[ \t\r]*$")
      continue()
    endif()
    set(where "${ARG_DATABASE}:${number}")
    set(fields "")
    set(bad "")
    foreach(field id variant result size_bucket threads target cpu halide attnforge canonical)
      string(JSON value ERROR_VARIABLE error GET "${record}" ${field})
      if(error)
        set(bad "${error}")
        break()
      endif()
      set(r_${field} "${value}")
    endforeach()
    if(NOT bad)
      string(JSON r_strategy ERROR_VARIABLE bad GET "${record}" best strategy)
    endif()
    if(NOT bad)
      string(JSON r_knobs ERROR_VARIABLE bad GET "${record}" best knobs)
    endif()
    if(NOT bad)
      string(JSON r_status ERROR_VARIABLE bad GET "${record}" best status)
    endif()
    if(NOT bad AND NOT r_status STREQUAL "ok")
      set(bad "its best schedule is not valid")
    endif()
    if(NOT bad AND NOT r_size_bucket MATCHES "^(Lk<=[0-9]+|[0-9]+<Lk<=[0-9]+)$")
      set(bad "size bucket '${r_size_bucket}' is not Lk<=N or A<Lk<=B")
    endif()
    if(NOT bad AND NOT r_knobs MATCHES "^([a-z_]+=[0-9]+( [a-z_]+=[0-9]+)*)?$")
      set(bad "knobs '${r_knobs}' are not name=value pairs")
    endif()
    if(NOT bad AND NOT "${r_id} ${r_variant} ${r_result}" MATCHES "^[A-Za-z0-9_-]+ [A-Za-z0-9_]+ [a-z_]+$")
      set(bad "id, variant or result has characters a kernel line cannot hold")
    endif()
    if(NOT bad AND NOT r_strategy MATCHES "^(materialized|streaming|mullapudi2016|li2018|adams2019)$")
      set(bad "unknown strategy '${r_strategy}'")
    endif()
    if(bad)
      message(WARNING "attnforge: ${where}: unreadable tuning record, ignored (default schedules stay): ${bad}")
      continue()
    endif()
    # Does it apply to this build?
    string(JSON here_canonical ERROR_VARIABLE no_variant GET "${ARG_PROBE}" variants ${r_variant})
    set(why "")
    if(no_variant)
      set(why "no built-in variant '${r_variant}'")
    elseif(NOT r_canonical STREQUAL here_canonical)
      set(why "variant '${r_variant}' changed since it was tuned")
    elseif(NOT r_target STREQUAL here_target)
      set(why "tuned for target ${r_target}, this machine is ${here_target}")
    elseif(NOT r_halide STREQUAL ARG_HALIDE_VERSION)
      set(why "tuned with Halide ${r_halide}, this build uses ${ARG_HALIDE_VERSION}")
    elseif(NOT r_attnforge STREQUAL ARG_ATTNFORGE_VERSION)
      set(why "tuned with attnforge ${r_attnforge}, this is ${ARG_ATTNFORGE_VERSION}")
    elseif(NOT r_cpu STREQUAL here_cpu)
      set(why "tuned on '${r_cpu}', this CPU is '${here_cpu}'")
    elseif(NOT r_threads STREQUAL ARG_THREADS)
      set(why "tuned for ${r_threads} threads, this build is for ${ARG_THREADS} (ATTNFORGE_TUNING_THREADS)")
    endif()
    if(why)
      string(REPLACE ";" "," why "${why}")  # a note is one list element
      list(APPEND notes "record ${r_id} (${r_variant} ${r_result} ${r_size_bucket}) ignored: ${why}")
      continue()
    endif()
    # Newest wins: a later line replaces an earlier one of the same key.
    string(MAKE_C_IDENTIFIER "${r_variant}__${r_result}__${r_size_bucket}" key)
    if(NOT key IN_LIST keys)
      list(APPEND keys ${key})
    endif()
    set(extra "")
    if(r_strategy MATCHES "^(mullapudi2016|li2018|adams2019)$")
      # An autoscheduler plans for sizes: the ones it was tuned at.
      string(JSON b GET "${record}" sizes B)
      string(JSON h GET "${record}" sizes H)
      string(JSON lk GET "${record}" sizes Lk)
      set(extra " estimate_batch=${b} estimate_heads=${h} estimate_length=${lk}")
    endif()
    set(line_${key} "${r_variant} ${r_result} ${r_strategy} ${r_size_bucket} ${r_knobs}${extra} @record=${r_id}")
  endforeach()
  set(lines "")
  foreach(key IN LISTS keys)
    string(REGEX REPLACE "  +" " " line "${line_${key}}")
    list(APPEND lines "${line}")
  endforeach()
  set(${ARG_OUT_LINES} "${lines}" PARENT_SCOPE)
  set(${ARG_OUT_NOTES} "${notes}" PARENT_SCOPE)
endfunction()

# attnforge_tuned_kernel_lines(DATABASE <file> OUT_LINES <var>)
# In a configured build: probes this machine and the sources (tools/tune/tuning_probe.cpp, compiled and run
# with try_run, only when the database has records) and selects. Multi-target builds use no records
# (their kernels serve several CPUs).
function(attnforge_tuned_kernel_lines)
  cmake_parse_arguments(ARG "" "DATABASE;OUT_LINES" "" ${ARGN})
  set(${ARG_OUT_LINES} "" PARENT_SCOPE)
  if(NOT EXISTS "${ARG_DATABASE}")
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${ARG_DATABASE}")
  file(READ "${ARG_DATABASE}" text)
  if(text MATCHES "^[ \t\r\n]*$")
    return()
  endif()
  list(LENGTH ATTNFORGE_KERNEL_TARGETS target_count)
  if(target_count GREATER 1 OR NOT ATTNFORGE_KERNEL_TARGETS STREQUAL "host")
    message(STATUS "attnforge: tuning records not used: kernels are built for '${ATTNFORGE_KERNEL_TARGETS}', records are for one host")
    return()
  endif()
  try_run(probe_ran probe_compiled
    SOURCES ${PROJECT_SOURCE_DIR}/tools/tune/tuning_probe.cpp
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${PROJECT_SOURCE_DIR}/dsl/include"
    LINK_LIBRARIES Halide::Halide Boost::headers nlohmann_json::nlohmann_json
    CXX_STANDARD 20
    COMPILE_OUTPUT_VARIABLE probe_compile_log
    RUN_OUTPUT_VARIABLE probe)
  if(NOT probe_compiled OR NOT probe_ran EQUAL 0)
    message(WARNING "attnforge: could not probe this machine for tuning records, default schedules used:\n${probe_compile_log}")
    return()
  endif()
  attnforge_select_tuning_records(
    DATABASE "${ARG_DATABASE}" PROBE "${probe}"
    HALIDE_VERSION "${Halide_VERSION}" ATTNFORGE_VERSION "${PROJECT_VERSION}" THREADS "${ATTNFORGE_TUNING_THREADS}"
    OUT_LINES lines OUT_NOTES notes)
  foreach(note IN LISTS notes)
    message(NOTICE "attnforge: note: ${note}")
  endforeach()
  foreach(line IN LISTS lines)
    message(STATUS "attnforge: tuned kernel: ${line}")
  endforeach()
  set(${ARG_OUT_LINES} "${lines}" PARENT_SCOPE)
endfunction()
