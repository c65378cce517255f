# The catalogue program (catalogue/): kernel lists + tuning records -> the CMake include that makes the
# kernels and the registry sources. CMake only runs it and includes what it writes.
#
# attnforge_run_catalogue(LIST <file>... [RECORDS <jsonl> PROBE <json file> THREADS <n>]
#                         [VARIANTS_NAMESPACE <ns>] [VARIANTS_INCLUDE <#include argument>]
#                         CMAKE_OUT <file> REGISTRY_OUT <file> REFERENCE_OUT <file>)
include_guard(GLOBAL)

# The program: the installed package's (attnforgeConfig.cmake sets ATTNFORGE_CATALOGUE_PROGRAM), or in
# attnforge's own build compiled at configure time from catalogue/ — once per change of its sources
# (the file name carries their hash), since the kernels must be known before anything is built.
function(_attnforge_catalogue_program out)
  if(ATTNFORGE_CATALOGUE_PROGRAM)
    set(${out} "${ATTNFORGE_CATALOGUE_PROGRAM}" PARENT_SCOPE)
    return()
  endif()
  set(dir ${PROJECT_SOURCE_DIR}/catalogue)
  file(GLOB sources ${dir}/src/*.cpp)
  file(GLOB headers ${dir}/include/attnforge/catalogue/*.hpp)
  list(APPEND headers ${PROJECT_SOURCE_DIR}/dsl/include/attnforge/element_types.hpp)  # the element-type table
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${sources} ${headers})
  set(text "")
  foreach(f IN LISTS sources headers)
    file(READ ${f} content)
    string(APPEND text "${f}\n${content}")
  endforeach()
  string(SHA256 hash "${text}")
  string(SUBSTRING ${hash} 0 16 hash)
  set(program ${CMAKE_BINARY_DIR}/catalogue_program/attnforge-catalogue-${hash})
  if(NOT EXISTS ${program})
    message(STATUS "attnforge: compiling the catalogue program")
    try_compile(compiled
      SOURCES ${sources}
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${dir}/include;${PROJECT_SOURCE_DIR}/dsl/include"
      LINK_LIBRARIES nlohmann_json::nlohmann_json CLI11::CLI11
      CXX_STANDARD 20
      OUTPUT_VARIABLE log
      COPY_FILE ${program}
      NO_CACHE)
    if(NOT compiled)
      message(FATAL_ERROR "attnforge: the catalogue program (catalogue/) did not compile:\n${log}")
    endif()
  endif()
  set(${out} ${program} PARENT_SCOPE)
endfunction()

function(attnforge_run_catalogue)
  cmake_parse_arguments(ARG "" "RECORDS;PROBE;THREADS;VARIANTS_NAMESPACE;VARIANTS_INCLUDE;CMAKE_OUT;REGISTRY_OUT;REFERENCE_OUT"
                        "LIST" ${ARGN})
  _attnforge_catalogue_program(program)
  set(command ${program} --cmake-out ${ARG_CMAKE_OUT} --registry-out ${ARG_REGISTRY_OUT}
              --reference-out ${ARG_REFERENCE_OUT})
  foreach(list_file IN LISTS ARG_LIST)
    list(APPEND command --list ${list_file})
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARG_LIST})
  if(ARG_RECORDS)
    list(APPEND command --records ${ARG_RECORDS} --probe ${ARG_PROBE} --threads ${ARG_THREADS}
                        --halide-version ${Halide_VERSION} --attnforge-version ${attnforge_VERSION})
  endif()
  if(ARG_VARIANTS_NAMESPACE)
    list(APPEND command --variants-namespace ${ARG_VARIANTS_NAMESPACE})
  endif()
  if(ARG_VARIANTS_INCLUDE)
    list(APPEND command --variants-include ${ARG_VARIANTS_INCLUDE})
  endif()
  cmake_host_system_information(RESULT cores QUERY NUMBER_OF_PHYSICAL_CORES)
  list(APPEND command --parallelism ${cores})
  execute_process(COMMAND ${command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "attnforge: ${err}")
  endif()
  # One line per message; a ';' in one would split it (CMake lists).
  string(REPLACE ";" "," out "${out}")
  string(REPLACE "\n" ";" out "${out}")
  foreach(line IN LISTS out)
    if(line MATCHES "^warning: (.*)")
      message(WARNING "attnforge: ${CMAKE_MATCH_1}")
    elseif(line MATCHES "^note: (.*)")
      message(NOTICE "attnforge: note: ${CMAKE_MATCH_1}")
    elseif(line MATCHES "^tuned: (.*)")
      message(STATUS "attnforge: tuned kernel: ${CMAKE_MATCH_1}")
    endif()
  endforeach()
endfunction()
