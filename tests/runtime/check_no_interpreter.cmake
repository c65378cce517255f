# cmake -DARCHIVE=<libattnforge_runtime.a> -DNM=<nm> -P check_no_interpreter.cmake
# The shipped runtime (kernels, registry, run API) neither defines nor references anything of the
# float64 interpreter (attnforge::interp): linking it cannot pull the interpreter in. Programs that want
# the interpreter link attnforge::engine.
execute_process(COMMAND ${NM} -C ${ARCHIVE} OUTPUT_VARIABLE symbols ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${NM} ${ARCHIVE} failed: ${errors}")
endif()
string(REGEX MATCHALL "[^\n]*attnforge::interp::[^\n]*" found "${symbols}")
if(found)
  list(LENGTH found n)
  list(SUBLIST found 0 5 first)
  string(REPLACE ";" "\n  " first "${first}")
  message(FATAL_ERROR "the runtime archive names ${n} symbols of attnforge::interp, e.g.\n  ${first}")
endif()
string(REGEX MATCHALL "[^\n]*attnforge::runtime::run\\([^\n]*" run "${symbols}")
if(NOT run)
  message(FATAL_ERROR "no attnforge::runtime::run in ${ARCHIVE}: is it the runtime archive?")
endif()
message(STATUS "the runtime archive holds no interpreter symbol")
