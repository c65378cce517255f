#include <attnforge/errors.hpp>
#include <attnforge/runtime/quantized_cache.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace attnforge::runtime {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + ")";
}

void expect(bool ok, const std::string& what) {
    if (!ok) throw input_error("quantize_into_cache: " + what);
}

// Where element (b, h, l[, e]) of a view lies in its memory: its strides, or row-major ones, taken once per call
// (the offsets are computed per row of every new token).
class Offsets {
public:
    Offsets(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides)
        : strides_(strides.empty() ? row_major_strides(shape) : strides) {}
    std::int64_t operator()(std::initializer_list<std::int64_t> index) const {
        std::int64_t at = 0;
        std::size_t axis = 0;
        for (std::int64_t i : index) at += i * strides_[axis++];
        return at;
    }

private:
    std::vector<std::int64_t> strides_;
};

}  // namespace

RowQuantization quantize_row(const float* x, std::int64_t n, std::uint8_t* codes) {
    float lo = x[0], hi = x[0];
    for (std::int64_t e = 1; e < n; ++e) {
        lo = std::min(lo, x[e]);
        hi = std::max(hi, x[e]);
    }
    // In double: a range near FLT_MAX does not overflow. A constant row: codes 0, and (0 − zero) · 1 = lo exactly.
    const double range = static_cast<double>(hi) - static_cast<double>(lo);
    // A range too small for a float32 step (below ~255 · 2⁻¹⁴⁹) is a constant row too: no step of 0.
    const float step = static_cast<float>(range / 255.0);
    const float scale = step > 0.0f ? step : 1.0f;
    for (std::int64_t e = 0; e < n; ++e) {
        // std::nearbyint in the default rounding mode: half to even.
        const double steps = std::nearbyint((static_cast<double>(x[e]) - lo) / static_cast<double>(scale));
        codes[e] = static_cast<std::uint8_t>(std::clamp(steps, 0.0, 255.0));
    }
    return {scale, -lo / scale};
}

namespace {

// What both rules check first: values (B, Hkv, Lnew, E) finite, kv_length (B) int32, the codes (B, Hkv, Lmax, E) of
// type `code`, each slot kv_length[b] + l inside Lmax, strides. The values as float32 and each entry's first slot.
struct CheckedValues {
    std::int64_t B, H, Lnew, E, Lmax;
    std::vector<std::int64_t> first;
    std::vector<float> x;

    const float* row(std::int64_t b, std::int64_t h, std::int64_t l) const {
        return x.data() + ((b * H + h) * Lnew + l) * E;
    }
};

CheckedValues check_values(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                           dsl::element_type code,
                           const std::vector<std::pair<const OutputView*, const char*>>& scales) {
    expect(values.shape.size() == 4, "values must be (B, Hkv, Lnew, E); given " + shape_text(values.shape));
    CheckedValues c{values.shape[0], values.shape[1], values.shape[2], values.shape[3], 0, {}, {}};
    const std::int64_t B = c.B, H = c.H, Lnew = c.Lnew, E = c.E;
    expect(E >= 1, "values must have at least one channel (E >= 1); given " + shape_text(values.shape));
    expect(values.dtype == dsl::element_type::float32 || values.dtype == dsl::element_type::bfloat16 ||
               values.dtype == dsl::element_type::float16,
           std::string("values must be float32, bf16 or fp16; given ") + dsl::element_type_name(values.dtype));
    expect(codes.shape.size() == 4 && codes.shape[0] == B && codes.shape[1] == H && codes.shape[3] == E,
           "codes must be (B, Hkv, Lmax, E) = (" + std::to_string(B) + ", " + std::to_string(H) + ", Lmax, " +
               std::to_string(E) + ") beside values " + shape_text(values.shape) + "; given " +
               shape_text(codes.shape));
    expect(codes.dtype == code,
           std::string("codes must be ") + dsl::element_type_name(code) + " here (" +
               (code == dsl::element_type::uint8 ? "a zero point given" : "no zero point given; uint8 codes take one") +
               "); given " + dsl::element_type_name(codes.dtype));
    c.Lmax = codes.shape[2];
    for (const auto& [view, name] : scales)
        expect(view->dtype == dsl::element_type::float32,
               std::string(name) + " must be float32; given " + dsl::element_type_name(view->dtype));
    expect(kv_length.shape == std::vector<std::int64_t>{B},
           "kv_length must be (B) = (" + std::to_string(B) + "); given " + shape_text(kv_length.shape));
    expect(kv_length.dtype == dsl::element_type::int32,
           std::string("kv_length must be int32; given ") + dsl::element_type_name(kv_length.dtype));
    std::vector<std::pair<const OutputView*, const char*>> outputs{{&codes, "codes"}};
    outputs.insert(outputs.end(), scales.begin(), scales.end());
    for (const auto& [view, name] : outputs)
        if (!view->strides.empty())
            if (const std::string why = stride_problem(view->shape, view->strides, true); !why.empty())
                expect(false, std::string(name) + ": " + why);
    for (const auto& [view, name] : {std::pair{&values, "values"}, std::pair{&kv_length, "kv_length"}})
        if (!view->strides.empty())
            if (const std::string why = stride_problem(view->shape, view->strides, false); !why.empty())
                expect(false, std::string(name) + ": " + why);
    c.first.resize(static_cast<std::size_t>(B));
    for (std::int64_t b = 0; b < B; ++b) {
        const double at = kv_length.value(static_cast<std::size_t>(b));
        expect(at >= 0 && at + static_cast<double>(Lnew) <= static_cast<double>(c.Lmax),
               "entry " + std::to_string(b) + ": slots " + std::to_string(static_cast<long long>(at)) + ".." +
                   std::to_string(static_cast<long long>(at) + Lnew - 1) +
                   " (kv_length + Lnew new tokens) must lie in "
                   "the cache's Lmax = " +
                   std::to_string(c.Lmax) + " slots");
        c.first[static_cast<std::size_t>(b)] = static_cast<std::int64_t>(at);
    }
    // The values as float32, row by row (a row of E is contiguous in any view a caller may pass), checked finite
    // before anything is written. The message is made only for a value that is not finite: made for every value
    // (a number formatted each time) it cost ~200 ns a value, a second per 4096-token prompt of a Llama-3 layer.
    c.x.resize(static_cast<std::size_t>(values.element_count()));
    const Offsets value_offsets(values.shape, values.strides);
    float* out = c.x.data();
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t l = 0; l < Lnew; ++l) {
                const std::int64_t row = value_offsets({b, h, l, 0});
                for (std::int64_t e = 0; e < E; ++e, ++out) {
                    *out = static_cast<float>(value_at(values.dtype, values.data, static_cast<std::size_t>(row + e)));
                    if (!std::isfinite(*out))
                        expect(false, "values must be finite; element " + std::to_string(out - c.x.data()) + " is " +
                                          std::to_string(*out));
                }
            }
    return c;
}

}  // namespace

float quantize_symmetric(const float* x, std::int64_t n, std::int8_t* codes) {
    float top = 0.0f;
    for (std::int64_t e = 0; e < n; ++e) top = std::max(top, std::abs(x[e]));
    // A group too small for a float32 step (below ~127 · 2⁻¹⁴⁹) is all 0: codes 0, scale 1.
    const float step = static_cast<float>(static_cast<double>(top) / 127.0);
    const float scale = step > 0.0f ? step : 1.0f;
    for (std::int64_t e = 0; e < n; ++e) {
        const double steps = std::nearbyint(static_cast<double>(x[e]) / static_cast<double>(scale));
        codes[e] = static_cast<std::int8_t>(std::clamp(steps, -127.0, 127.0));
    }
    return scale;
}

void quantize_into_cache(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                         const OutputView& scale, const OutputView& zero) {
    const CheckedValues c =
        check_values(values, kv_length, codes, dsl::element_type::uint8, {{&scale, "scale"}, {&zero, "zero"}});
    const std::vector<std::int64_t> per_token{c.B, c.H, c.Lmax};
    for (const auto& [view, name] : {std::pair{&scale, "scale"}, std::pair{&zero, "zero"}})
        expect(view->shape == per_token, std::string(name) + " must be (B, Hkv, Lmax) = " + shape_text(per_token) +
                                             "; given " + shape_text(view->shape));
    auto* code_bytes = static_cast<std::uint8_t*>(codes.data);
    auto* scales = static_cast<float*>(scale.data);
    auto* zeros = static_cast<float*>(zero.data);
    const Offsets code_at(codes.shape, codes.strides), scale_at(scale.shape, scale.strides),
        zero_at(zero.shape, zero.strides);
    for (std::int64_t b = 0; b < c.B; ++b)
        for (std::int64_t h = 0; h < c.H; ++h)
            for (std::int64_t l = 0; l < c.Lnew; ++l) {
                const std::int64_t slot = c.first[static_cast<std::size_t>(b)] + l;
                const RowQuantization q = quantize_row(c.row(b, h, l), c.E, code_bytes + code_at({b, h, slot}));
                scales[scale_at({b, h, slot})] = q.scale;
                zeros[zero_at({b, h, slot})] = q.zero;
            }
}

void quantize_into_cache(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                         const OutputView& scale) {
    const CheckedValues c = check_values(values, kv_length, codes, dsl::element_type::int8, {{&scale, "scale"}});
    const std::vector<std::int64_t> per_token{c.B, c.H, c.Lmax};
    const bool grouped = scale.shape.size() == 4;
    const std::int64_t groups = grouped ? scale.shape[3] : 1;
    expect((scale.shape == per_token) ||
               (grouped && std::vector<std::int64_t>(scale.shape.begin(), scale.shape.end() - 1) == per_token &&
                groups >= 1 && c.E % groups == 0),
           "scale must be (B, Hkv, Lmax) = " + shape_text(per_token) +
               " (a scale per token) or (B, Hkv, Lmax, E/G) with G dividing E = " + std::to_string(c.E) +
               " (a scale per G channels); given " + shape_text(scale.shape));
    const std::int64_t G = c.E / groups;
    auto* code_bytes = static_cast<std::int8_t*>(codes.data);
    auto* scales = static_cast<float*>(scale.data);
    const Offsets code_at(codes.shape, codes.strides), scale_at(scale.shape, scale.strides);
    for (std::int64_t b = 0; b < c.B; ++b)
        for (std::int64_t h = 0; h < c.H; ++h)
            for (std::int64_t l = 0; l < c.Lnew; ++l) {
                const std::int64_t slot = c.first[static_cast<std::size_t>(b)] + l;
                std::int8_t* row = code_bytes + code_at({b, h, slot});
                for (std::int64_t g = 0; g < groups; ++g) {
                    const float s = quantize_symmetric(c.row(b, h, l) + g * G, G, row + g * G);
                    scales[grouped ? scale_at({b, h, slot, g}) : scale_at({b, h, slot})] = s;
                }
            }
}

void quantize_into_cache(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                         const OutputView& scale, const OutputView& zero, const OutputView& open_block) {
    const CheckedValues c = check_values(values, kv_length, codes, dsl::element_type::uint8,
                                         {{&scale, "scale"}, {&zero, "zero"}, {&open_block, "open_block"}});
    expect(open_block.shape.size() == 4 && open_block.shape[0] == c.B && open_block.shape[1] == c.H &&
               open_block.shape[2] >= 1 && open_block.shape[3] == c.E,
           "open_block must be (B, Hkv, T, E) = (" + std::to_string(c.B) + ", " + std::to_string(c.H) + ", T, " +
               std::to_string(c.E) + "), T >= 1 the tokens of a block; given " + shape_text(open_block.shape));
    const std::int64_t T = open_block.shape[2], blocks = (c.Lmax + T - 1) / T;
    const std::vector<std::int64_t> per_block{c.B, c.H, blocks, c.E};
    for (const auto& [view, name] : {std::pair{&scale, "scale"}, std::pair{&zero, "zero"}})
        expect(view->shape == per_block, std::string(name) + " must be (B, Hkv, ceil(Lmax/T), E) = " +
                                             shape_text(per_block) + " for blocks of T = " + std::to_string(T) +
                                             " tokens (open_block's); given " + shape_text(view->shape));
    if (c.Lnew == 0) return;  // no tokens: nothing read, nothing written
    auto* code_bytes = static_cast<std::uint8_t*>(codes.data);
    auto* scales = static_cast<float*>(scale.data);
    auto* zeros = static_cast<float*>(zero.data);
    auto* kept = static_cast<float*>(open_block.data);
    const Offsets code_at(codes.shape, codes.strides), scale_at(scale.shape, scale.strides),
        zero_at(zero.shape, zero.strides), kept_at(open_block.shape, open_block.strides);
    // The earlier tokens of each entry's open block, checked finite before anything is written: a block is
    // quantized from them again.
    for (std::int64_t b = 0; b < c.B; ++b) {
        const std::int64_t first = c.first[static_cast<std::size_t>(b)];
        for (std::int64_t h = 0; h < c.H; ++h)
            for (std::int64_t t = 0; t < first % T; ++t)
                for (std::int64_t e = 0; e < c.E; ++e)
                    if (!std::isfinite(kept[kept_at({b, h, t, e})]))
                        expect(false, "open_block must hold the open block's earlier tokens (finite values): entry " +
                                          std::to_string(b) + ", head " + std::to_string(h) + ", token " +
                                          std::to_string(t) + " is " + std::to_string(kept[kept_at({b, h, t, e})]));
    }
    std::vector<float> rows(static_cast<std::size_t>(T * c.E)), column(static_cast<std::size_t>(T));
    std::vector<std::uint8_t> column_codes(static_cast<std::size_t>(T));
    for (std::int64_t b = 0; b < c.B; ++b) {
        const std::int64_t first = c.first[static_cast<std::size_t>(b)], end = first + c.Lnew;
        for (std::int64_t h = 0; h < c.H; ++h) {
            for (std::int64_t block = first / T; block <= (end - 1) / T; ++block) {
                // The block's tokens so far: the kept ones before `first`, then the new ones.
                const std::int64_t start = block * T, stop = std::min(start + T, end), n = stop - start;
                for (std::int64_t t = start; t < stop; ++t)
                    for (std::int64_t e = 0; e < c.E; ++e)
                        rows[static_cast<std::size_t>((t - start) * c.E + e)] =
                            t < first ? kept[kept_at({b, h, t - start, e})] : c.row(b, h, t - first)[e];
                for (std::int64_t e = 0; e < c.E; ++e) {
                    for (std::int64_t t = 0; t < n; ++t)
                        column[static_cast<std::size_t>(t)] = rows[static_cast<std::size_t>(t * c.E + e)];
                    const RowQuantization q = quantize_row(column.data(), n, column_codes.data());
                    for (std::int64_t t = 0; t < n; ++t)
                        code_bytes[code_at({b, h, start + t, e})] = column_codes[static_cast<std::size_t>(t)];
                    scales[scale_at({b, h, block, e})] = q.scale;
                    zeros[zero_at({b, h, block, e})] = q.zero;
                }
                if (block == (end - 1) / T)  // the last block written: its tokens are kept for the next write
                    for (std::int64_t t = 0; t < n; ++t)
                        for (std::int64_t e = 0; e < c.E; ++e)
                            kept[kept_at({b, h, t, e})] = rows[static_cast<std::size_t>(t * c.E + e)];
            }
        }
    }
}

}  // namespace attnforge::runtime
