// The generator of the built-in variants (attnforge::dsl::builtin_variants): every kernel of
// generated/kernels.list. The generator itself is codegen/include/attnforge/codegen/attention_generator.hpp.
//
// Built twice: into the generator executable (ahead of time, by CMake) and into attnforge-tune, which
// compiles candidate schedules just in time from the same registered generator.
#include <attnforge/codegen/attention_generator.hpp>

ATTNFORGE_REGISTER_ATTENTION_GENERATOR(attnforge::dsl::builtin_variants)
