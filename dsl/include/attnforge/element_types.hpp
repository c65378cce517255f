// The element-type table: every element type a kernel's inputs and results may have, once (docs/contract.md
// §1: element types are a property of each input). Each row gives the type's name (as kernel lines, --dtype,
// the registry and messages spell it), its size, its Halide type (code and bits, as halide_type_t takes them),
// whether it is a storage type of float tensors (float32, bf16, fp16: a graph's float32 tensors may be stored
// in it), and its .npy descriptor. The DSL, the catalogue, the generator, the runtime, the Python module, io
// and the tools read names, sizes and types from it; adding a type (int4 codes, fp8) is a row here and the
// conversions that read or write it.
//
// Plain C++ with no other include of the project, beside errors.hpp at the top of attnforge/: no layer's, every
// layer's (the catalogue program, compiled at configure time from catalogue/ and this, reads it).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace attnforge::dsl {

// A graph's tensors are float32, boolean (masks) or int32 (index inputs); bfloat16 and float16 are storage
// types of float32 tensors in a generated kernel; uint8 and int8 hold quantized values (codes of a KV cache).
enum class element_type { float32, boolean, int32, bfloat16, float16, uint8, int8 };

struct element_type_spec {
    element_type type;
    std::string_view name;
    std::size_t bytes;
    int halide_code;  // halide_type_code_t: 0 int, 1 uint, 2 float, 4 bfloat
    int halide_bits;
    bool storage;          // a storage type of float32 tensors
    std::string_view npy;  // its .npy descriptor ("" where .npy has none: bf16)
};

// clang-format off
inline constexpr std::array element_types = {
    //                type                    name       bytes code bits storage npy
    element_type_spec{element_type::float32,  "float32", 4,    2,   32,  true,   "<f4"},
    element_type_spec{element_type::bfloat16, "bf16",    2,    4,   16,  true,   ""},
    element_type_spec{element_type::float16,  "fp16",    2,    2,   16,  true,   "<f2"},
    element_type_spec{element_type::int32,    "int32",   4,    0,   32,  false,  "<i4"},
    element_type_spec{element_type::boolean,  "bool",    1,    1,   8,   false,  "|b1"},
    element_type_spec{element_type::uint8,    "uint8",   1,    1,   8,   false,  "|u1"},
    element_type_spec{element_type::int8,     "int8",    1,    0,   8,   false,  "|i1"},
};
// clang-format on

constexpr const element_type_spec& spec_of(element_type t) {
    for (const element_type_spec& s : element_types)
        if (s.type == t) return s;
    return element_types.front();  // unreachable: every enumerator has its row
}

inline const char* element_type_name(element_type t) {
    return spec_of(t).name.data();  // the names are literals: null-terminated
}

// The row of a name ("bf16"), or null.
constexpr const element_type_spec* find_element_type(std::string_view name) {
    for (const element_type_spec& s : element_types)
        if (s.name == name) return &s;
    return nullptr;
}

// "float32, bf16 or fp16": the storage types' names, for messages.
inline std::string storage_type_names() {
    std::string out, last;
    for (const element_type_spec& s : element_types) {
        if (!s.storage) continue;
        if (!last.empty()) out += (out.empty() ? "" : ", ") + last;
        last = std::string(s.name);
    }
    return out + " or " + last;
}

}  // namespace attnforge::dsl
