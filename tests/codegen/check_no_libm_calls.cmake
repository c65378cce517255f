# Generates one kernel's assembly with the build's generator (as the build does, for the host) and
# fails if it calls a C math library routine: every transcendental of a score modifier must be
# straight-line vector code (codegen/.../lower/vector_math.hpp), never a call per score.
# -DGENERATOR=... -DVARIANT=... -DSTRATEGY=... -DHEAD_WIDTH=<E of a run-time-E variant's kernel, else 0> -DOUT=<folder>
file(MAKE_DIRECTORY ${OUT})
set(width "")
if(HEAD_WIDTH)
  set(width "head_width=${HEAD_WIDTH}")
endif()
execute_process(COMMAND ${GENERATOR} -n k -d 0 -g attnforge_attention -f k -e assembly -o ${OUT}
                        target=host-no_runtime variant=${VARIANT} result=output strategy=${STRATEGY} ${width}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generating ${VARIANT} (${STRATEGY}) failed: ${err}")
endif()
file(READ ${OUT}/k.s text)
string(REGEX MATCHALL "call[q]?[ \t]+[A-Za-z_0-9]+(f|l)?(@PLT)?" calls "${text}")
set(library_calls "")
foreach(call IN LISTS calls)
  if(call MATCHES "(tanh|exp|exp2|expm1|log|log2|log1p|pow|floor|ceil|sin|cos|sqrt|fabs|fmin|fmax)f?(@PLT)?$")
    list(APPEND library_calls "${call}")
  endif()
endforeach()
list(LENGTH calls n)
if(library_calls)
  list(REMOVE_DUPLICATES library_calls)
  message(FATAL_ERROR "${VARIANT} (${STRATEGY}) calls the math library: ${library_calls} (${OUT}/k.s)")
endif()
message(STATUS "${VARIANT} (${STRATEGY}): ${n} calls, none to the math library")
