# The build options that choose what a build makes (cmake/AttnforgeKernelSelection.cmake), on the real kernel list:
# none keeps every kernel line; head widths keep a line's widths among them and add new ones where 64 is; storage
# types keep a line's types among them and drop the lines of inputs in another type. Run with -DSOURCE_DIR= and
# -DWORK_DIR=.
include(${SOURCE_DIR}/cmake/AttnforgeKernelSelection.cmake)
set(list ${SOURCE_DIR}/generated/kernels.list)
set(out ${WORK_DIR}/kernel_selection.list)
set(kernel_line "^[A-Za-z_][A-Za-z_0-9]*[ \t]+(output|attention_weights|logsumexp)[ \t]")

file(STRINGS ${list} original REGEX "${kernel_line}")
list(LENGTH original original_count)

# No option: every line as it is.
attnforge_select_kernel_lines(${list} ${out})
file(STRINGS ${out} selected REGEX "${kernel_line}")
if(NOT selected STREQUAL original)
  message(FATAL_ERROR "kernel selection: with no option the kernel lines changed")
endif()

# Head widths 128 and 48: 64, 80, 96 and 256 gone; 48 (no line lists it) added where 64 was; 128 kept.
set(ATTNFORGE_HEAD_WIDTHS "128,48")
attnforge_select_kernel_lines(${list} ${out})
file(READ ${out} text)
if(text MATCHES "E=[0-9,]*(64|80|96|256)")
  message(FATAL_ERROR "kernel selection: widths outside ATTNFORGE_HEAD_WIDTHS remain: ${CMAKE_MATCH_0}")
endif()
if(NOT text MATCHES "sdpa +attention_weights +materialized +any +E=128,48 "
   OR NOT text MATCHES "sdpa +output +streaming +any +E=48 "
   OR NOT text MATCHES "pv_cols=4 pv_key_block=32 key_panels_outer=1 E=128 " OR NOT text MATCHES "\nmha +output")
  message(FATAL_ERROR "kernel selection: ATTNFORGE_HEAD_WIDTHS=128,48 made:\n${text}")
endif()
# A line whose variant serves only multiples of 32 (E_multiple=32) takes 128 and not 48.
if(NOT text MATCHES "decode_i8_g32 +output +streaming +any +E=128 E_multiple=32 ")
  message(FATAL_ERROR "kernel selection: ATTNFORGE_HEAD_WIDTHS=128,48 gave decode_i8_g32:\n${text}")
endif()
unset(ATTNFORGE_HEAD_WIDTHS)

# Storage types float32 and bf16: no fp16 kernel; the bf16-cache decode lines stay; the fp16-only lines go.
set(ATTNFORGE_STORAGE_TYPES "float32,bf16")
attnforge_select_kernel_lines(${list} ${out})
file(STRINGS ${out} selected REGEX "${kernel_line}")
list(LENGTH selected selected_count)
file(READ ${out} text)
if(text MATCHES "fp16" OR NOT text MATCHES "dtype.k=bf16 dtype.v=bf16" OR NOT selected_count LESS original_count)
  message(FATAL_ERROR "kernel selection: ATTNFORGE_STORAGE_TYPES=float32,bf16 made:\n${text}")
endif()
unset(ATTNFORGE_STORAGE_TYPES)

# One variant only (tools/multitarget).
set(ATTNFORGE_ONLY_VARIANTS "sdpa")
attnforge_select_kernel_lines(${list} ${out})
file(STRINGS ${out} selected REGEX "${kernel_line}")
foreach(line IN LISTS selected)
  if(NOT line MATCHES "^sdpa ")
    message(FATAL_ERROR "kernel selection: ATTNFORGE_ONLY_VARIANTS=sdpa kept ${line}")
  endif()
endforeach()
