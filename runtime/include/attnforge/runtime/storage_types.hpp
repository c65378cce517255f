// The 16-bit storage types of a generated kernel (docs/contract.md §1): bf16 (bfloat16: float32's sign
// and exponent, 7 fraction bits) and fp16 (IEEE binary16), held as their bits. Converting to them rounds
// to nearest, ties to even, as the kernels' own conversions do.
#pragma once

#include <attnforge/bf16_bits.hpp>
#include <attnforge/dsl/passes/signature.hpp>
#include <attnforge/errors.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnforge::runtime {

// float32 ↔ bf16 (attnforge/bf16_bits.hpp): rounds to nearest even, a NaN stays a NaN.
using attnforge::bf16_from_float;
using attnforge::float_from_bf16;

// float32 ↔ fp16 (IEEE binary16): rounds to nearest even, keeps ±∞, NaN and subnormals (runtime/src/
// storage_types.cpp, with the FP16 library, Debian libfp16-dev: not every compiler has _Float16, clang 14 on
// x86 has not).
std::uint16_t fp16_from_float(float x);
float float_from_fp16(std::uint16_t h);

// x rounded to a storage type (float32: unchanged), as a float.
inline float round_to_storage(float x, dsl::element_type storage) {
    switch (storage) {
        case dsl::element_type::bfloat16:
            return float_from_bf16(bf16_from_float(x));
        case dsl::element_type::float16:
            return float_from_fp16(fp16_from_float(x));
        default:
            return x;
    }
}

inline bool is_storage_type(dsl::element_type t) {
    return dsl::spec_of(t).storage;
}

// A storage type by its name in the element-type table ("float32", "bf16", "fp16": what kernel lists, --dtype
// and the registry say); anything else is an input_error naming them.
inline dsl::element_type storage_type_named(std::string_view name) {
    if (const dsl::element_type_spec* s = dsl::find_element_type(name); s && s->storage) return s->type;
    throw input_error("a storage type (--dtype) is " + dsl::storage_type_names() + ", given '" + std::string(name) +
                      "'");
}

// The type `input` has in a kernel's input types ("k=bf16 v=bf16", KernelEntry::input_types), if listed.
inline std::optional<dsl::element_type> own_input_type(std::string_view input_types, std::string_view input) {
    while (!input_types.empty()) {
        const std::size_t end = std::min(input_types.find(' '), input_types.size());
        const std::string_view word = input_types.substr(0, end);
        const std::size_t eq = word.find('=');
        if (eq != std::string_view::npos && word.substr(0, eq) == input) return storage_type_named(word.substr(eq + 1));
        input_types.remove_prefix(std::min(end + 1, input_types.size()));
    }
    return std::nullopt;
}

}  // namespace attnforge::runtime
