// The exceptions attnforge throws for bad input: callers (the CLI) map them to exit status 2.
#pragma once

#include <stdexcept>

namespace attnforge {

// A tensor or file the caller supplied does not fit: wrong shape, dtype, missing or extra input,
// unreadable or malformed file. The message names what was expected and what was given.
struct input_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

}  // namespace attnforge
