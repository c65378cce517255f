// Writing new tokens into a quantized KV cache (docs/contract.md §1, caches): the operation that makes the codes a
// `decode_u8` kernel reads. By token, as OpenVINO's CPU plugin stores its u8 caches: each row x of E values (one
// token of one KV head) gets its own scale and zero point from its range,
//   scale = (max x − min x) / 255        (1 where the row is constant: its codes are then all 0),
//   zero  = −min x / scale,
//   code  = round half to even((x − min x) / scale), clamped to [0, 255],
// so that (code − zero) · scale is x within scale / 2 (plus float32 rounding), and a constant row exactly.
// docs/storage_types.md gives the rule and the error it makes beside OpenVINO's and a q8_0 cache's.
#pragma once

#include <attnforge/runtime/tensor_view.hpp>

namespace attnforge::runtime {

// Quantizes `values` (B, Hkv, Lnew, E), float32, bf16 or fp16, into the cache: row l of entry b, head h goes to slot
// kv_length[b] + l of codes (B, Hkv, Lmax, E) uint8 and of scale and zero (B, Hkv, Lmax) float32, in place (views:
// the caller's memory, dense or strided with the last axis dense). kv_length (B) int32 is read, not changed: the
// caller advances it by Lnew. Everything is checked before anything is written: shapes and dtypes that disagree,
// a slot past Lmax, a value that is not finite are an input_error naming what was expected and what was given.
void quantize_into_cache(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                         const OutputView& scale, const OutputView& zero);

// One row's scale and zero point and its codes, by the rule above (what quantize_into_cache does per row): `codes`
// holds n bytes.
struct RowQuantization {
    float scale, zero;
};
RowQuantization quantize_row(const float* x, std::int64_t n, std::uint8_t* codes);

}  // namespace attnforge::runtime
