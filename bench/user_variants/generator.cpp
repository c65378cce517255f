// attnforge's generator over the user variants of this folder.
#include "user_variants.hpp"
#include <attnforge/codegen/attention_generator.hpp>

ATTNFORGE_REGISTER_ATTENTION_GENERATOR(user_variants::all)
