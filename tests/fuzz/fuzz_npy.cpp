// libFuzzer target for the .npy reader (tools/fuzz builds and runs it with clang, AddressSanitizer and
// UndefinedBehaviorSanitizer). Seeds: tests/fuzz/corpus; inputs that once failed: tests/fuzz/regressions,
// replayed by the io.npy_untrusted test in every build.
#include "read_untrusted_npy.hpp"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    attnforge::fuzz::read_untrusted_npy(std::as_bytes(std::span(data, size)));
    return 0;
}
