cmake_minimum_required(VERSION 3.25)
# cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<dir> -P check_selection.cmake
# The build's side of tuning records (cmake/AttnforgeTuning.cmake), in script mode: which records
# become tuned kernel lines, which are ignored with a note, and that corrupt lines never fail.
include(${SOURCE_DIR}/cmake/AttnforgeTuning.cmake)
file(MAKE_DIRECTORY ${WORK_DIR})

set(probe [=[{"target":"x86-64-linux-avx2-fma","cpu":"Test CPU","variants":{"sdpa":"sdpa = A","mha":"mha = B"}}]=])
set(base [=[{"id":"111111111111","time":"2026-11-23T00:00:00Z","variant":"sdpa","result":"output","size_bucket":"1024<Lk<=2048","threads":2,"target":"x86-64-linux-avx2-fma","cpu":"Test CPU","halide":"21.0.0","attnforge":"0.1.0","canonical":"sdpa = A","sizes":{"B":1,"H":8,"Lq":2048,"Lk":2048},"search":{"method":"evolutionary","seed":1,"trials":3,"seconds":1.0,"interrupted":false},"best":{"strategy":"materialized","knobs":"q_block=64 q_unroll=8","status":"ok","ms":1.0,"screen_ms":1.0,"compile_s":0.4},"default":{"strategy":"materialized","knobs":"q_block=32 q_unroll=8","status":"ok","ms":1.2,"screen_ms":1.2,"compile_s":0.4},"autoschedulers":[],"top":[]}]=])

function(record out)  # record(<var> [field value]...): the base record with fields replaced
  set(r "${base}")
  set(args ${ARGN})
  while(args)
    list(POP_FRONT args path value)
    string(REPLACE "." ";" path "${path}")
    string(JSON r SET "${r}" ${path} "${value}")
  endwhile()
  string(REGEX REPLACE "\n *" "" r "${r}")  # string(JSON SET) pretty-prints: back to one line
  set(${out} "${r}" PARENT_SCOPE)
endfunction()

function(select db_text out_lines out_notes)
  file(WRITE ${WORK_DIR}/records.jsonl "${db_text}")
  attnforge_select_tuning_records(DATABASE ${WORK_DIR}/records.jsonl PROBE "${probe}" HALIDE_VERSION 21.0.0
                                  ATTNFORGE_VERSION 0.1.0 THREADS 2 OUT_LINES lines OUT_NOTES notes)
  set(${out_lines} "${lines}" PARENT_SCOPE)
  set(${out_notes} "${notes}" PARENT_SCOPE)
endfunction()

function(expect what actual expected)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}:\n  got      '${actual}'\n  expected '${expected}'")
  endif()
endfunction()

# A matching record becomes a tuned line.
select("${base}\n" lines notes)
expect("matching record" "${lines}" "sdpa output materialized 1024<Lk<=2048 q_block=64 q_unroll=8 @record=111111111111")
expect("no notes" "${notes}" "")

# The newest of the same key wins; other buckets and results are separate lines.
record(newer id [["222222222222"]] best.knobs [["q_block=96 q_unroll=12"]])
record(other_bucket id [["333333333333"]] size_bucket [["2048<Lk<=4096"]])
select("${base}\n${newer}\n${other_bucket}\n" lines notes)
list(LENGTH lines n)
expect("two keys" "${n}" "2")
list(GET lines 0 first)
expect("newest wins" "${first}" "sdpa output materialized 1024<Lk<=2048 q_block=96 q_unroll=12 @record=222222222222")

# Records for another machine or other sources: ignored, each with a note saying why.
record(other_target id [["444444444444"]] target [["x86-64-linux-avx512"]])
record(other_halide id [["555555555555"]] halide [["22.0.0"]])
record(changed id [["666666666666"]] canonical [["sdpa = A'"]])
record(other_threads id [["777777777777"]] threads 16)
record(other_cpu id [["888888888888"]] cpu [["Other CPU"]])
record(unknown id [["999999999999"]] variant [["no_such_variant"]])
select("${other_target}\n${other_halide}\n${changed}\n${other_threads}\n${other_cpu}\n${unknown}\n" lines notes)
expect("nothing applies" "${lines}" "")
list(LENGTH notes n)
expect("six notes" "${n}" "6")
list(GET notes 0 note)
if(NOT note MATCHES "record 444444444444 .* ignored: tuned for target x86-64-linux-avx512, this machine is x86-64-linux-avx2-fma")
  message(FATAL_ERROR "target note: ${note}")
endif()
list(GET notes 1 note)
if(NOT note MATCHES "tuned with Halide 22.0.0, this build uses 21.0.0")
  message(FATAL_ERROR "Halide note: ${note}")
endif()
list(GET notes 2 note)
if(NOT note MATCHES "changed since it was tuned")
  message(FATAL_ERROR "canonical note: ${note}")
endif()

# Corrupt lines (cut short, not JSON, a field missing, bad knobs, an invalid best, a ';' inside):
# skipped with a warning, the good record still used; an empty or missing database selects nothing.
record(bad_knobs id [["aaaaaaaaaaaa"]] best.knobs [["q_block=64 $(rm -rf /)"]])
string(REPLACE "Test CPU" "Test; CPU" semicolon "${base}")  # a ';' inside a line must not split it
record(invalid_best id [["bbbbbbbbbbbb"]] best.status [["invalid: differs"]])
record(bad_bucket id [["cccccccccccc"]] size_bucket [["Lk<2048"]])
string(SUBSTRING "${base}" 0 120 cut)
select("${cut}\nnot json\n{\"id\":\"x\"}\n${bad_knobs}\n${invalid_best}\n${bad_bucket}\n\n${semicolon}\n${base}\n" lines notes)
expect("corrupt lines skipped" "${lines}" "sdpa output materialized 1024<Lk<=2048 q_block=64 q_unroll=8 @record=111111111111")
list(LENGTH notes n)
expect("the ';' record is read whole (its CPU differs)" "${n}" "1")
select("" lines notes)
expect("empty database" "${lines}" "")

# Autoscheduler winners plan for the sizes they were tuned at.
record(auto id [["dddddddddddd"]] best.strategy [["li2018"]] best.knobs [[""]])
select("${auto}\n" lines notes)
expect("autoscheduler record" "${lines}" "sdpa output li2018 1024<Lk<=2048 estimate_batch=1 estimate_heads=8 estimate_length=2048 @record=dddddddddddd")
message(STATUS "tuning record selection: all checks passed")
