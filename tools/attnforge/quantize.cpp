// attnforge quantize --values FILE.npy --codes FILE.npy --scale FILE.npy --zero FILE.npy [--kv-length FILE.npy]
//                    [--lmax N]
// Writes new tokens' keys or values (B, Hkv, Lnew, E) into a uint8 cache quantized by token (decode_u8's k, k_scale,
// k_zero or v, v_scale, v_zero; the rule: runtime/quantized_cache.hpp): where --codes names an existing file the
// cache is read from the three files and the new rows go to slots kv_length[b]...; otherwise a new cache of --lmax
// slots (default Lnew) is made. kv_length (B) int32 from --kv-length (required for an existing cache; zeros for a new
// one). Everything is read, checked and computed before anything is written; then the three files are written (codes
// |u1, scale and zero <f4), each beside its place first and then all three renamed.
#include "commands.hpp"
#include "exit_status.hpp"
#include "tensors.hpp"
#include <attnforge/errors.hpp>
#include <attnforge/io/npy.hpp>
#include <attnforge/runtime/quantized_cache.hpp>

#include <filesystem>
#include <ostream>

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
        runtime::Tensor codes, scale, zero;
        if (std::filesystem::exists(o.codes)) {
            if (o.lmax) throw input_error("--lmax makes a new cache; " + o.codes + " exists already");
            // Tokens go after the ones the cache holds: where, the caller says (slot 0 would overwrite the prompt).
            if (o.kv_length.empty())
                throw input_error("--kv-length is needed to add tokens to the existing cache " + o.codes);
            codes = load_input("codes", o.codes, dsl::element_type::uint8, warnings);
            scale = load_input("scale", o.scale, dsl::element_type::float32, warnings);
            zero = load_input("zero", o.zero, dsl::element_type::float32, warnings);
        } else {
            const std::int64_t lmax = o.lmax.value_or(values.shape[2]);
            codes = runtime::Tensor::codes({B, H, lmax, E});
            scale = runtime::Tensor::float32({B, H, lmax});
            zero = runtime::Tensor::float32({B, H, lmax});
        }
        runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                     runtime::output_view_of(codes), runtime::output_view_of(scale),
                                     runtime::output_view_of(zero));
        // The three files as one: each written beside its place first, then all renamed; a failed write leaves the
        // cache as it was.
        const std::string fresh = ".attnforge-new";
        try {
            io::write_npy(o.codes + fresh, codes.shape, codes.u8);
            io::write_npy(o.scale + fresh, scale.shape, scale.f32);
            io::write_npy(o.zero + fresh, zero.shape, zero.f32);
        } catch (...) {
            for (const std::string* path : {&o.codes, &o.scale, &o.zero}) std::filesystem::remove(*path + fresh);
            throw;
        }
        for (const std::string* path : {&o.codes, &o.scale, &o.zero}) std::filesystem::rename(*path + fresh, *path);
        out << "attnforge: quantized " << dsl::shape_string(values.shape) << " into " << o.codes << " "
            << dsl::shape_string(codes.shape) << "\n";
        return 0;
    });
}

}  // namespace attnforge::cli
