# cmake -DSOURCE_DIR=<repo> -P check_layering.cmake
# The layers docs/design.md draws, checked on the includes:
#   - the lowering (lowering.hpp, plan.hpp, lower.hpp, lower/) includes no schedule header: it reads the
#     AlgorithmPlan, never the knobs;
#   - runtime/ never includes the Halide compiler (Halide.h), only Halide's runtime headers, and only the
#     engine (engine.*, reference.hpp: the opt-in second engine) includes the float64 interpreter;
#   - catalogue/ (which kernels) includes neither Halide nor the DSL nor codegen nor runtime (the shared
#     plain headers at the top of attnforge/ — errors.hpp, element_types.hpp — are no layer's);
#   - dsl/ includes neither Halide nor codegen nor runtime.
set(failures "")
function(forbid files pattern why)
  foreach(f IN LISTS files)
    file(STRINGS "${f}" hits REGEX "${pattern}")
    if(hits)
      list(GET hits 0 first)
      set(failures "${failures}\n  ${f}: ${first}  (${why})" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()
set(cg ${SOURCE_DIR}/codegen/include/attnforge/codegen)
file(GLOB_RECURSE lowering ${cg}/lower/*.hpp)
list(APPEND lowering ${cg}/lower.hpp ${cg}/lowering.hpp ${cg}/plan.hpp)
forbid("${lowering}" "#include <attnforge/codegen/schedules/" "the lowering reads the plan, not the knobs")
file(GLOB_RECURSE runtime_files ${SOURCE_DIR}/runtime/*.hpp ${SOURCE_DIR}/runtime/*.cpp ${SOURCE_DIR}/runtime/*.in)
forbid("${runtime_files}" "#include <Halide\\.h>" "the runtime ships without the Halide compiler")
set(shipped ${runtime_files})
list(FILTER shipped EXCLUDE REGEX "/(engine\\.(hpp|cpp)|reference\\.hpp)$")
forbid("${shipped}" "^#include <attnforge/interp/" "the runtime ships without the interpreter; the engine adds it")
file(GLOB_RECURSE catalogue_files ${SOURCE_DIR}/catalogue/*.hpp ${SOURCE_DIR}/catalogue/*.cpp)
forbid("${catalogue_files}" "^#include <(Halide|attnforge/(dsl|codegen|runtime|interp)[/.])" "the catalogue is plain C++")
file(GLOB_RECURSE dsl_files ${SOURCE_DIR}/dsl/*.hpp ${SOURCE_DIR}/dsl/*.cpp)
forbid("${dsl_files}" "#include <(Halide|attnforge/codegen/|attnforge/runtime/)" "the DSL is the ground floor")
list(LENGTH lowering n)
if(n LESS 10)
  message(FATAL_ERROR "found only ${n} lowering headers under ${cg}: the check reads the wrong folder")
endif()
if(failures)
  message(FATAL_ERROR "an include runs against the layers:${failures}")
endif()
