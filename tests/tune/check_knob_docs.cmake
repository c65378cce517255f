# cmake -DTOOL=<attnforge> -DDOC=<docs/tuning.md> -P check_knob_docs.cmake
# The knob table docs/tuning.md prints must be the one `attnforge tune --help-knobs` prints from the
# code's table, verbatim: the docs cannot drift from the knobs the generator and the tuner use.
execute_process(COMMAND ${TOOL} tune --help-knobs OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "attnforge tune --help-knobs failed (${rc})")
endif()
file(READ ${DOC} doc)
string(FIND "${doc}" "${table}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC} does not hold the knob table as `attnforge tune --help-knobs` prints it; "
                      "paste this between its knob-table markers:\n${table}")
endif()
