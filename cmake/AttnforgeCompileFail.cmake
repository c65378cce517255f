# attnforge_add_compile_fail_test(NAME <name> SOURCE <file.cpp> EXPECT <regex>...)
#
# Adds a CTest test that compiles SOURCE (syntax only) against the DSL and passes when the compile
# FAILS with exactly one static_assert and every EXPECT regex matches the compiler's output: one
# mistake, one message, and the message pinned.
set(_attnforge_compile_fail_script "${CMAKE_CURRENT_LIST_DIR}/check_compile_fails.cmake")

function(attnforge_add_compile_fail_test)
  cmake_parse_arguments(ARG "" "NAME;SOURCE" "EXPECT" ${ARGN})
  get_target_property(dsl_includes attnforge_dsl INTERFACE_INCLUDE_DIRECTORIES)
  string(REPLACE "$<BUILD_INTERFACE:" "" dsl_includes "${dsl_includes}")
  string(REPLACE ">" "" dsl_includes "${dsl_includes}")
  add_test(NAME compile_fail.${ARG_NAME}
    COMMAND ${CMAKE_COMMAND}
      -DCOMPILER=${CMAKE_CXX_COMPILER}
      -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/${ARG_SOURCE}
      "-DINCLUDES=${dsl_includes};${Boost_INCLUDE_DIRS}"
      "-DEXPECT=${ARG_EXPECT}"
      -P ${_attnforge_compile_fail_script})
  set_tests_properties(compile_fail.${ARG_NAME} PROPERTIES LABELS compile_fail)
endfunction()
