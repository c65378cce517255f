// The project's kernel generator: attnforge's generator over the project's variants.
#include "my_variants.hpp"
#include <attnforge/codegen/attention_generator.hpp>

ATTNFORGE_REGISTER_ATTENTION_GENERATOR(my_project::variants::all)
