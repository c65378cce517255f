# The downstream project (examples/downstream) against the installed package, as a user would:
#   cmake --install BUILD_DIR --prefix WORK/prefix; configure, build and run examples/downstream.
# Script mode: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DHALIDE_DIR=... -DNINJA=... -P check_downstream.cmake
foreach(var IN ITEMS BUILD_DIR SOURCE_DIR WORK_DIR HALIDE_DIR NINJA)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_downstream.cmake: -D${var}=... is required")
  endif()
endforeach()

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${status}): ${command}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
# Only the installed tree: nothing of the source or build tree is on the downstream's paths.
step(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja -DCMAKE_MAKE_PROGRAM=${NINJA}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DHalide_DIR=${HALIDE_DIR})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j 2)
step(${WORK_DIR}/build/downstream)
