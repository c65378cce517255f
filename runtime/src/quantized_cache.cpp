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

// Offset of element (b, h, l[, e]) of a view's memory: its strides, or row-major.
std::int64_t offset_of(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                       std::initializer_list<std::int64_t> index) {
    const std::vector<std::int64_t> s = strides.empty() ? row_major_strides(shape) : strides;
    std::int64_t at = 0;
    std::size_t axis = 0;
    for (std::int64_t i : index) at += i * s[axis++];
    return at;
}

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

void quantize_into_cache(const TensorView& values, const TensorView& kv_length, const OutputView& codes,
                         const OutputView& scale, const OutputView& zero) {
    expect(values.shape.size() == 4, "values must be (B, Hkv, Lnew, E); given " + shape_text(values.shape));
    const std::int64_t B = values.shape[0], H = values.shape[1], Lnew = values.shape[2], E = values.shape[3];
    expect(E >= 1, "values must have at least one channel (E >= 1); given " + shape_text(values.shape));
    expect(values.dtype == dsl::element_type::float32 || values.dtype == dsl::element_type::bfloat16 ||
               values.dtype == dsl::element_type::float16,
           std::string("values must be float32, bf16 or fp16; given ") + dsl::element_type_name(values.dtype));
    expect(codes.shape.size() == 4 && codes.shape[0] == B && codes.shape[1] == H && codes.shape[3] == E,
           "codes must be (B, Hkv, Lmax, E) = (" + std::to_string(B) + ", " + std::to_string(H) + ", Lmax, " +
               std::to_string(E) + ") beside values " + shape_text(values.shape) + "; given " +
               shape_text(codes.shape));
    expect(codes.dtype == dsl::element_type::uint8,
           std::string("codes must be uint8; given ") + dsl::element_type_name(codes.dtype));
    const std::int64_t Lmax = codes.shape[2];
    const std::vector<std::int64_t> per_token{B, H, Lmax};
    for (const auto& [view, name] : {std::pair{&scale, "scale"}, std::pair{&zero, "zero"}}) {
        expect(view->shape == per_token, std::string(name) + " must be (B, Hkv, Lmax) = " + shape_text(per_token) +
                                             "; given " + shape_text(view->shape));
        expect(view->dtype == dsl::element_type::float32,
               std::string(name) + " must be float32; given " + dsl::element_type_name(view->dtype));
    }
    expect(kv_length.shape == std::vector<std::int64_t>{B},
           "kv_length must be (B) = (" + std::to_string(B) + "); given " + shape_text(kv_length.shape));
    expect(kv_length.dtype == dsl::element_type::int32,
           std::string("kv_length must be int32; given ") + dsl::element_type_name(kv_length.dtype));
    for (const auto& [view, name] : {std::pair{&codes, "codes"}, std::pair{&scale, "scale"}, std::pair{&zero, "zero"}})
        if (!view->strides.empty())
            if (const std::string why = stride_problem(view->shape, view->strides, true); !why.empty())
                expect(false, std::string(name) + ": " + why);
    for (const auto& [view, name] : {std::pair{&values, "values"}, std::pair{&kv_length, "kv_length"}})
        if (!view->strides.empty())
            if (const std::string why = stride_problem(view->shape, view->strides, false); !why.empty())
                expect(false, std::string(name) + ": " + why);
    std::vector<std::int64_t> first(static_cast<std::size_t>(B));
    for (std::int64_t b = 0; b < B; ++b) {
        const double at = kv_length.value(static_cast<std::size_t>(b));
        expect(at >= 0 && at + static_cast<double>(Lnew) <= static_cast<double>(Lmax),
               "entry " + std::to_string(b) + ": slots " + std::to_string(static_cast<long long>(at)) + ".." +
                   std::to_string(static_cast<long long>(at) + Lnew - 1) +
                   " (kv_length + Lnew new tokens) must lie in "
                   "the cache's Lmax = " +
                   std::to_string(Lmax) + " slots");
        first[static_cast<std::size_t>(b)] = static_cast<std::int64_t>(at);
    }
    // The values as float32, checked finite before anything is written.
    std::vector<float> x(static_cast<std::size_t>(values.element_count()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(values.value(i));
        expect(std::isfinite(x[i]),
               "values must be finite; element " + std::to_string(i) + " is " + std::to_string(values.value(i)));
    }
    auto* code_bytes = static_cast<std::uint8_t*>(codes.data);
    auto* scales = static_cast<float*>(scale.data);
    auto* zeros = static_cast<float*>(zero.data);
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t l = 0; l < Lnew; ++l) {
                const std::int64_t slot = first[static_cast<std::size_t>(b)] + l;
                const float* row = x.data() + ((b * H + h) * Lnew + l) * E;
                const RowQuantization q =
                    quantize_row(row, E, code_bytes + offset_of(codes.shape, codes.strides, {b, h, slot}));
                scales[offset_of(scale.shape, scale.strides, {b, h, slot})] = q.scale;
                zeros[offset_of(zero.shape, zero.strides, {b, h, slot})] = q.zero;
            }
}

}  // namespace attnforge::runtime
