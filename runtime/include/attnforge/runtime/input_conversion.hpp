// The rules by which an array a caller gives (a .npy file to the CLI, a NumPy array or torch tensor to the
// Python module) becomes a kernel input of an element type (docs/contract.md §4), in one place:
//
//   input's type   taken                                                   converted
//   bool           bool, uint8                                             non-zero → true
//   uint8, int8    its own type only (quantized codes)                     never
//   int32          int32, int64, float32, float64                          whole numbers in int32's range (dsl::index_value)
//   float32        float32, float64 (the caller warns), float16, bfloat16  16-bit values exactly
//   bf16, fp16     its own type, float32, float64                          rounded to nearest even; never the other 16-bit type
//
// A float tensor's type is the kernel's storage type where the caller converts to it directly (Python),
// float32 where rounding to storage comes later (the CLI, runtime::to_storage): a .npy '<f2' is then taken
// for any kernel.
#pragma once

#include <attnforge/element_types.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace attnforge::runtime {

// The element type an array comes in: the kernels' own types and the wider ones converted on the way.
enum class GivenType { float32, float64, float16, bfloat16, boolean, uint8, int8, int32, int64, other };

// The given type that is the element type itself (read in place where contiguous).
GivenType given_type_of(dsl::element_type t);
std::size_t given_bytes(GivenType t);

// Whether an input of type `input` takes an array of type `given`.
bool takes(dsl::element_type input, GivenType given);
// The types it takes other than its own, in the order of the table above (for messages).
std::span<const GivenType> also_taken(dsl::element_type input);

// What an input takes, for messages: "float32 (or float64, float16, bfloat16)", "int32 (or int64, float32,
// float64 holding whole numbers)", each type named by `name` (skipped where it gives "": a type the caller
// cannot be given, such as bf16 in a .npy file).
std::string taken_text(dsl::element_type input, const std::function<std::string(GivenType)>& name);

// `count` elements of type `given` at `from` (contiguous) as elements of type `input` at `to`. `what` names
// the input in the error an index out of range or not whole throws. Where the input does not take `given`
// nothing is written: callers check takes() first, to say what they were given in their own words.
void convert_elements(const std::uint8_t* from, GivenType given, std::size_t count, dsl::element_type input,
                      std::uint8_t* to, const std::string& what);
// One element: element `index` of `to`, from the value at `from` (a strided array's walk).
void convert_element(const std::uint8_t* from, GivenType given, dsl::element_type input, std::uint8_t* to,
                     std::size_t index, const std::string& what);

}  // namespace attnforge::runtime
