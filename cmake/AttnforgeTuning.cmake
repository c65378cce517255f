# Tuning records at configure time: the probe of this build.
#
# generated/tuning_records.jsonl (written by `attnforge tune`) says, per (variant, result, size bucket),
# which schedule measured fastest on some machine. Which records apply here, and where their kernels
# go, is the catalogue's to decide (catalogue/: select_tuned_lines, assemble); what it needs from
# CMake is what only a compiled program can read off this machine and these sources: Halide's host
# target, the CPU model and every built-in variant's canonical DSL text (tools/tune/tuning_probe.cpp).
#
# attnforge_probe_for_records(DATABASE <file> OUT_PROBE <var>)
# Sets <var> to the file holding the probe's JSON, or to "" where no record can apply: no records, or
# kernels built for other targets than this host (a multi-target build serves several CPUs).
function(attnforge_probe_for_records)
  cmake_parse_arguments(ARG "" "DATABASE;OUT_PROBE" "" ${ARGN})
  set(${ARG_OUT_PROBE} "" PARENT_SCOPE)
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
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/tuning_probe.json "${probe}")
  set(${ARG_OUT_PROBE} ${CMAKE_CURRENT_BINARY_DIR}/tuning_probe.json PARENT_SCOPE)
endfunction()
