// What the fuzz target and the corpus replay test both do with untrusted bytes: parse them as a .npy
// file and convert the values, as `attnforge run` does with an --input file. The only acceptable
// failure is attnforge::input_error; anything else (another exception, a crash, a sanitizer report,
// an allocation the file's size does not justify) is a bug.
#pragma once

#include <attnforge/errors.hpp>
#include <attnforge/io/npy.hpp>

#include <cstddef>
#include <span>

namespace attnforge::fuzz {

// True when the bytes are a valid .npy file, false when they were rejected with an input_error.
inline bool read_untrusted_npy(std::span<const std::byte> bytes) {
    try {
        const io::NpyArray array = io::parse_npy(bytes, "<untrusted>");
        const interp::Tensor values = io::to_tensor(array);
        // A parse that claims success must be self-consistent.
        if (values.element_count() != array.element_count() ||
            array.bytes.size() !=
                static_cast<std::size_t>(array.element_count()) * io::npy_item_bytes(array.dtype))
            __builtin_trap();
        return true;
    } catch (const input_error&) {
        return false;
    }
}

}  // namespace attnforge::fuzz
