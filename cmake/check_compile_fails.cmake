# Run by attnforge_add_compile_fail_test: cmake -DCOMPILER= -DSOURCE= -DINCLUDES= -DEXPECT= -P this
set(include_flags "")
foreach(dir IN LISTS INCLUDES)
  if(dir)
    list(APPEND include_flags "-I${dir}")
  endif()
endforeach()
execute_process(
  COMMAND ${COMPILER} -std=c++20 -fsyntax-only ${include_flags} ${SOURCE}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not")
endif()
string(REGEX MATCHALL "static assertion failed" asserts "${output}")
list(LENGTH asserts count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected exactly one static_assert, got ${count}:\n${output}")
endif()
foreach(pattern IN LISTS EXPECT)
  if(NOT output MATCHES "${pattern}")
    message(FATAL_ERROR "the diagnostic does not match '${pattern}':\n${output}")
  endif()
endforeach()
message(STATUS "failed to compile as expected, with the pinned message")
