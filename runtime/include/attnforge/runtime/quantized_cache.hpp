// Writing new tokens into a quantized KV cache (docs/contract.md §1, caches): the operation that makes the codes the
// decode_u8, decode_i8, decode_i8_g32 and decode_u8_kc128 kernels read. Two rules, by the codes' type:
//   uint8, by token, as OpenVINO's CPU plugin stores its u8 caches: each row x of E values (one token of one KV
//   head) gets its own scale and zero point from its range,
//     scale = (max x − min x) / 255        (1 where the row is constant: its codes are then all 0),
//     zero  = −min x / scale,
//     code  = round half to even((x − min x) / scale), clamped to [0, 255],
//   so that (code − zero) · scale is x within scale / 2 (plus float32 rounding), and a constant row exactly;
//   int8, symmetric, each group x of G channels of a row (G = E: the row; G = 32: llama.cpp's q8_0 blocks),
//     scale = max |x| / 127                (1 where the group is all 0),
//     code  = round half to even(x / scale), clamped to [−127, 127],
//   so that code · scale is x within scale / 2 (plus float32 rounding), and 0 exactly.
// docs/storage_types.md gives the rules and the errors they make beside OpenVINO's and a q8_0 cache's.
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

// The same for int8 codes (B, Hkv, Lmax, E) with their scales, per token (B, Hkv, Lmax) or per group of G channels
// (B, Hkv, Lmax, E/G): G is E divided by the scales' last size, which must divide E.
void quantize_into_cache(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                         const OutputView& scale);

// uint8 keys by channel over blocks of T tokens (KIVI's keys; decode_u8_kc128's k with T = 128): codes (B, Hkv,
// Lmax, E) uint8, scale and zero (B, Hkv, ⌈Lmax/T⌉, E) float32, one per channel of each block, by the uint8 rule
// above applied down each channel of a block's tokens. A block is quantized from all of its tokens written so far,
// so the block that new tokens open or extend is quantized again, from its earlier tokens' values as well: those
// are kept in open_block (B, Hkv, T, E) float32, which this call reads (slots kv_length[b] − kv_length[b] % T ..
// kv_length[b] − 1 of entry b, none where kv_length[b] is a multiple of T) and updates (the tokens of the last
// block written). The caller keeps open_block with the cache, one per K cache (T taken from its shape; it must be
// the variant's: decode_u8_kc128's 128, which its kernels cannot tell from the shapes where ⌈Lmax/T⌉ agrees). It is
// read only where kv_length[b] is not a multiple of T: a cache filled from slot 0 through this call reads back what
// it wrote, and a fresh one needs no initial contents. The codes and scales of a block then equal those of quantizing
// its tokens all at once, whatever the steps they came in.
void quantize_into_cache(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                         const OutputView& scale, const OutputView& zero, const OutputView& open_block);

// One row's scale and zero point and its codes, by the rule above (what quantize_into_cache does per row): `codes`
// holds n bytes.
struct RowQuantization {
    float scale, zero;
};
RowQuantization quantize_row(const float* x, std::int64_t n, std::uint8_t* codes);
// One group's symmetric scale and its codes (n of them), by the int8 rule above: returns the scale.
float quantize_symmetric(const float* x, std::int64_t n, std::int8_t* codes);

}  // namespace attnforge::runtime
