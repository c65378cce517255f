// attnforge's generator over this example's variants.
#include "my_variant.hpp"
#include <attnforge/codegen/attention_generator.hpp>

ATTNFORGE_REGISTER_ATTENTION_GENERATOR(my_variants::all)
