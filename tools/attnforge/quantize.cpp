// attnforge quantize --values FILE.npy --codes FILE.npy --scale FILE.npy [--zero FILE.npy] [--group G]
//                    [--kv-length FILE.npy] [--lmax N] [--open-block FILE.npy]
// Writes new tokens' keys or values (B, Hkv, Lnew, E) into a quantized cache (the rules: runtime/quantized_cache.hpp):
// with --zero, uint8 codes by token (decode_u8's k, k_scale, k_zero); without, int8 codes with a scale per token or,
// with --group G, per G channels (decode_i8's k, k_scale; decode_i8_g32's with G = 32); with --zero and
// --open-block, uint8 keys by channel of blocks of 128 tokens (decode_u8_kc128's k, k_scale, k_zero; the block being
// filled kept in that file, read with an existing cache, written with it; a new cache's blocks are decode_u8_kc128's
// 128 tokens, an existing one's as its open block's file says). Where --codes names an
// existing file the cache is read from its files (the codes' type and the scales' shape say which) and the new rows
// go to slots kv_length[b]...; otherwise a new cache of --lmax slots (default Lnew) is made. kv_length (B) int32 from
// --kv-length (required for an existing cache; zeros for a new one). Everything is read, checked and computed before
// anything is written; then the files are written (codes |u1 or |i1, scales and zero points <f4), each beside its
// place first and then all renamed.
#include "commands.hpp"
#include "exit_status.hpp"
#include "tensors.hpp"
#include <attnforge/errors.hpp>
#include <attnforge/io/npy.hpp>
#include <attnforge/runtime/quantized_cache.hpp>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <span>
#include <vector>

namespace attnforge::cli {

int quantize(const QuantizeOptions& o, std::ostream& out, std::ostream& err) {
    return with_exit_status("quantize", err, [&](std::ostream& warnings) {
        const runtime::Tensor values = load_input("values", o.values, dsl::element_type::float32, warnings);
        if (values.shape.size() != 4)
            throw input_error("--values must be (B, Hkv, Lnew, E); given " + dsl::shape_string(values.shape));
        const std::int64_t B = values.shape[0], H = values.shape[1], E = values.shape[3];
        const runtime::Tensor lengths = o.kv_length.empty()
                                            ? runtime::Tensor::int32({B})
                                            : load_input("kv_length", o.kv_length, dsl::element_type::int32, warnings);
        const bool by_token = !o.zero.empty();  // uint8 with zero points, else symmetric int8
        const dsl::element_type code = by_token ? dsl::element_type::uint8 : dsl::element_type::int8;
        if (o.group && by_token)
            throw input_error("--group is for int8 codes (no --zero); a uint8 cache has a scale per token");
        const bool by_channel = !o.open_block.empty();
        if (by_channel && !by_token)
            throw input_error("--open-block is for uint8 keys by channel, which take a zero point (--zero)");
        runtime::Tensor codes, scale, zero, open_block;
        if (std::filesystem::exists(o.codes)) {
            if (o.lmax) throw input_error("--lmax makes a new cache; " + o.codes + " exists already");
            if (o.group) throw input_error("--group makes a new cache (the scales' shape gives an existing one's)");
            // Tokens go after the ones the cache holds: where, the caller says (slot 0 would overwrite the prompt).
            if (o.kv_length.empty())
                throw input_error("--kv-length is needed to add tokens to the existing cache " + o.codes);
            codes = load_input("codes", o.codes, code, warnings);
            scale = load_input("scale", o.scale, dsl::element_type::float32, warnings);
            if (by_token) zero = load_input("zero", o.zero, dsl::element_type::float32, warnings);
            if (by_channel) open_block = load_input("open_block", o.open_block, dsl::element_type::float32, warnings);
        } else {
            const std::int64_t lmax = o.lmax.value_or(values.shape[2]);
            // --group G: scales (B, Hkv, Lmax, E/G), even where G = E; without, one a token (B, Hkv, Lmax).
            if (o.group && (E < 1 || E % *o.group != 0))
                throw input_error("--group " + std::to_string(*o.group) +
                                  " must divide the head width E = " + std::to_string(E));
            codes = runtime::Tensor::codes({B, H, lmax, E}, code);
            if (by_channel) {
                // decode_u8_kc128's blocks: the kernel cannot tell another T from its shapes where ⌈Lmax/T⌉ agrees.
                constexpr std::int64_t T = 128;
                const std::int64_t blocks = (lmax + T - 1) / T;
                scale = runtime::Tensor::float32({B, H, blocks, E});
                zero = runtime::Tensor::float32({B, H, blocks, E});
                open_block = runtime::Tensor::float32({B, H, T, E});
            } else {
                scale = o.group ? runtime::Tensor::float32({B, H, lmax, E / *o.group})
                                : runtime::Tensor::float32({B, H, lmax});
                if (by_token) zero = runtime::Tensor::float32({B, H, lmax});
            }
        }
        if (by_channel)
            runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                         runtime::output_view_of(codes), runtime::output_view_of(scale),
                                         runtime::output_view_of(zero), runtime::output_view_of(open_block));
        else if (by_token)
            runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                         runtime::output_view_of(codes), runtime::output_view_of(scale),
                                         runtime::output_view_of(zero));
        else
            runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                         runtime::output_view_of(codes), runtime::output_view_of(scale));
        // The files as one: each written beside its place first, then all renamed; a failed write leaves the cache
        // as it was.
        const std::string fresh = ".attnforge-new";
        std::vector<const std::string*> paths{&o.codes, &o.scale};
        if (by_token) paths.push_back(&o.zero);
        if (by_channel) paths.push_back(&o.open_block);
        try {
            if (by_token)
                io::write_npy(o.codes + fresh, codes.shape, codes.u8);
            else
                io::write_npy(o.codes + fresh, codes.shape,
                              std::span<const std::int8_t>(reinterpret_cast<const std::int8_t*>(codes.u8.data()),
                                                           codes.u8.size()));
            io::write_npy(o.scale + fresh, scale.shape, scale.f32);
            if (by_token) io::write_npy(o.zero + fresh, zero.shape, zero.f32);
            if (by_channel) io::write_npy(o.open_block + fresh, open_block.shape, open_block.f32);
        } catch (...) {
            for (const std::string* path : paths) std::filesystem::remove(*path + fresh);
            throw;
        }
        for (const std::string* path : paths) std::filesystem::rename(*path + fresh, *path);
        out << "attnforge: quantized " << dsl::shape_string(values.shape) << " into " << o.codes << " "
            << dsl::shape_string(codes.shape) << "\n";
        return 0;
    });
}

}  // namespace attnforge::cli
