// synthetic_inputs: deterministic inputs for any graph signature at given sizes: activations and heads uniform in
// [-scale, scale], weights uniform in ±2·weight_scale/sqrt(D_in), LayerNorm gamma near 1, masks with some keys
// masked and, where there is more than one, a fully masked batch entry or query row; values that
// predicates read as indices are integers (int32 where the input is an index input): document ids
// (B, L) in runs of packed documents, per batch entry lengths (B) in [0, L], and cache lengths in
// [0, Lmax]: the first entry's cache full, the second's empty, the rest random (full_caches: all full,
// as a benchmark's decode step over a filled cache); a run-time scalar a quarter of the longest length (int32)
// or a number near 1; a quantized cache's codes any byte, with scales and zero points that give values in about
// [-scale, scale].
#pragma once

#include <attnforge/runtime/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>

namespace attnforge::testing {

using runtime::Tensor;
using runtime::TensorMap;

struct SyntheticSizes {
    std::int64_t batch = 1;
    std::int64_t heads = 2;                                   // for a run-time head count
    std::map<std::string, std::int64_t, std::less<>> length;  // by sequence tag
    std::int64_t kv_heads = 0;                                // for a run-time Hkv; 0: heads (MHA)
    std::int64_t head_width = 64;                             // for a run-time head width E
    // PyTorch's attn_mask (B or 1, H or 1, Lq, Lk): 1 along those axes (broadcast), else B and H.
    bool mask_one_batch = false, mask_one_head = false;
};

struct SyntheticOptions {
    double activation_scale = 1.0;
    bool integer_values = false;  // small integers: exact float32 products, for logits of 1e4
    unsigned seed = 1;
    bool full_caches = false;  // every cache length = Lmax
    double weight_scale = 1.0;  // projection weights times this: large logits behind a LayerNorm
    double scale = 0;           // a scale input (scale_input()): given this value; 0: not given (its default, 1/√E)
    // Optional parameters (a window, a cap, ALiBi's slopes): given (a window a quarter of the longest length, numbers
    // about 1), or left out to their defaults (128, 20, the paper's slopes: what a benchmark measures).
    bool give_parameters = false;
};

inline std::vector<std::int64_t> shape_for(const dsl::tensor_spec& spec, const SyntheticSizes& s) {
    std::vector<std::int64_t> shape;
    for (const auto& d : spec.dims) {
        if (d.broadcast && (d.role == dsl::dim_spec::axis::batch ? s.mask_one_batch : s.mask_one_head)) {
            shape.push_back(1);
            continue;
        }
        switch (d.role) {
            case dsl::dim_spec::axis::batch:
                shape.push_back(s.batch);
                break;
            case dsl::dim_spec::axis::heads:
                shape.push_back(s.heads);
                break;
            case dsl::dim_spec::axis::kv_heads:
                shape.push_back(s.kv_heads > 0 ? s.kv_heads : s.heads);
                break;
            case dsl::dim_spec::axis::head_width:
                shape.push_back(s.head_width);
                break;
            case dsl::dim_spec::axis::head_width_groups:
                shape.push_back(s.head_width / d.size);
                break;
            case dsl::dim_spec::axis::sequence_blocks:
                shape.push_back((s.length.at(d.sequence) + d.size - 1) / d.size);
                break;
            case dsl::dim_spec::axis::fixed:
                shape.push_back(d.size);
                break;
            case dsl::dim_spec::axis::sequence:
                shape.push_back(s.length.at(d.sequence));
                break;
        }
    }
    return shape;
}

// A (B or 1, H or 1, Lq, Lk) mask: in its last (batch, head) slice the second half of the keys removed for every
// query (padding), so that long cases have whole key tiles to skip; remove(i) removes element i.
template <class Remove>
void cut_key_tail(const std::vector<std::int64_t>& shape, Remove remove) {
    const std::int64_t slices = shape[0] * shape[1], Lq = shape[2], Lk = shape[3];
    for (std::int64_t i = 0; i < Lq; ++i)
        for (std::int64_t j = Lk / 2; j < Lk; ++j) remove(static_cast<std::size_t>(((slices - 1) * Lq + i) * Lk + j));
}

inline TensorMap synthetic_inputs(const dsl::graph_signature& sig, const SyntheticSizes& sizes,
                                  const SyntheticOptions& o) {
    TensorMap out;
    std::mt19937 gen(o.seed);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::uniform_int_distribution<int> small(-40, 40);
    for (const auto& spec : sig.inputs) {
        const auto shape = shape_for(spec, sizes);
        if (spec.optional() && !spec.is_scale() && !o.give_parameters) continue;  // its default
        if (spec.is_scale()) {  // a scale: the call's own where the options give one, else its default (1/√E)
            if (o.scale != 0) {
                Tensor t = Tensor::float32(shape);
                t.f32[0] = static_cast<float>(o.scale);
                out.emplace(spec.name, std::move(t));
            }
            continue;
        }
        if (spec.dtype == dsl::element_type::boolean) {
            Tensor t = Tensor::boolean(shape);
            std::bernoulli_distribution coin(0.3);
            for (auto& v : t.u8) v = coin(gen) ? 1 : 0;
            const std::int64_t last = shape.back(), rows = t.element_count() / std::max<std::int64_t>(last, 1);
            if (shape.size() == 2) {  // key padding (B, Lk), true = padded: the second batch entry all padded
                if (rows > 1)
                    for (std::int64_t j = 0; j < last; ++j) t.u8[static_cast<std::size_t>(last + j)] = 1;
            } else {  // attention mask (B, Lq, Lk), true = takes part: flip to mostly kept, one row all masked
                for (auto& v : t.u8) v = static_cast<std::uint8_t>(1 - v);
                if (rows > 1)
                    for (std::int64_t j = 0; j < last; ++j) t.u8[static_cast<std::size_t>(last + j)] = 0;
                if (shape.size() == 4) cut_key_tail(shape, [&](std::size_t i) { t.u8[i] = 0; });
            }
            out.emplace(spec.name, std::move(t));
            continue;
        }
        if (spec.dtype == dsl::element_type::uint8 || spec.dtype == dsl::element_type::int8) {
            // A quantized cache's codes: any byte (their scales and zero points, below, give them values in about
            // ±activation_scale).
            Tensor t = Tensor::codes(shape, spec.dtype);
            std::uniform_int_distribution<int> byte(0, 255);
            for (auto& v : t.u8) v = static_cast<std::uint8_t>(byte(gen));
            out.emplace(spec.name, std::move(t));
            continue;
        }
        if (spec.quantization) {
            // Scales of about 2·activation_scale/255 (a token's range over 255 codes), zero points about the middle
            // code, not whole numbers (as OpenVINO's −min/scale).
            Tensor t = Tensor::float32(shape);
            const bool scale = *spec.quantization == dsl::quantization_role::scale;
            for (auto& v : t.f32)
                v = scale ? static_cast<float>((1.0 + 0.5 * unit(gen)) * 2.0 * o.activation_scale / 255.0)
                          : static_cast<float>(127.5 + 20.0 * unit(gen));
            out.emplace(spec.name, std::move(t));
            continue;
        }
        std::int64_t longest = 1;
        for (const auto& [tag, n] : sizes.length) longest = std::max(longest, n);
        if (spec.dims.empty()) {  // a run-time scalar: an integer a quarter of the longest length (a window), or a
                                  // positive number about 1 (a cap)
            if (spec.dtype == dsl::element_type::int32) {
                Tensor t = Tensor::int32(shape);
                t.i32[0] = static_cast<std::int32_t>(std::max<std::int64_t>(1, longest / 4));
                out.emplace(spec.name, std::move(t));
            } else {
                Tensor t = Tensor::float32(shape);
                t.f32[0] = 1.0f + 0.2f * unit(gen);
                out.emplace(spec.name, std::move(t));
            }
            continue;
        }
        using axis = dsl::dim_spec::axis;
        const bool per_token =
            spec.dims.size() == 2 && spec.dims[0].role == axis::batch && spec.dims[1].role == axis::sequence;
        const bool per_batch = spec.dims.size() == 1 && spec.dims[0].role == axis::batch;
        if (per_token || per_batch) {
            std::vector<double> values(static_cast<std::size_t>(dsl::element_count(shape)));
            if (!spec.values_bounded_by.empty()) {  // cache lengths
                const std::int64_t lmax = sizes.length.at(spec.values_bounded_by);
                std::uniform_int_distribution<std::int64_t> length(0, lmax);
                for (std::size_t b = 0; b < values.size(); ++b)
                    values[b] = static_cast<double>(o.full_caches || b == 0 ? lmax : b == 1 ? 0 : length(gen));
            } else if (per_batch) {
                std::uniform_int_distribution<std::int64_t> length(0, longest);
                for (auto& v : values) v = static_cast<double>(length(gen));
            } else {  // document ids: each entry packs documents of random lengths (about L/4 each)
                std::bernoulli_distribution next_document(4.0 /
                                                          static_cast<double>(std::max<std::int64_t>(shape[1], 4)));
                for (std::int64_t b = 0; b < shape[0]; ++b) {
                    double id = 0.0;
                    for (std::int64_t l = 0; l < shape[1]; ++l) {
                        if (l > 0 && next_document(gen)) id += 1.0;
                        values[static_cast<std::size_t>(b * shape[1] + l)] = id;
                    }
                }
            }
            Tensor t = spec.dtype == dsl::element_type::int32 ? Tensor::int32(shape) : Tensor::float32(shape);
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (spec.dtype == dsl::element_type::int32)
                    t.i32[i] = static_cast<std::int32_t>(values[i]);
                else
                    t.f32[i] = static_cast<float>(values[i]);
            }
            out.emplace(spec.name, std::move(t));
            continue;
        }
        if (spec.dims.size() == 4 && spec.dims[0].broadcast) {  // an additive attn_mask: −inf where a bool one is false
            Tensor t = Tensor::float32(shape);
            std::bernoulli_distribution coin(0.3);
            const float minus_inf = -std::numeric_limits<float>::infinity();
            for (auto& v : t.f32) v = coin(gen) ? minus_inf : 2.0f * unit(gen);
            const std::int64_t last = shape.back(), rows = t.element_count() / std::max<std::int64_t>(last, 1);
            if (rows > 1)
                for (std::int64_t j = 0; j < last; ++j) t.f32[static_cast<std::size_t>(last + j)] = minus_inf;
            cut_key_tail(shape, [&](std::size_t i) { t.f32[i] = minus_inf; });
            out.emplace(spec.name, std::move(t));
            continue;
        }
        Tensor t = Tensor::float32(shape);
        const bool weight = spec.dims.size() == 2 && spec.dims[0].role == dsl::dim_spec::axis::fixed &&
                            spec.dims[1].role == dsl::dim_spec::axis::fixed;
        const bool vector = spec.dims.size() == 1;
        for (auto& v : t.f32) {
            if (o.integer_values)
                v = static_cast<float>(small(gen));
            else if (weight)
                v = unit(gen) / std::sqrt(static_cast<float>(spec.dims[0].size)) * 2.0f *
                    static_cast<float>(o.weight_scale);
            else if (vector)
                v = 1.0f + 0.2f * unit(gen);
            else
                v = unit(gen) * static_cast<float>(o.activation_scale);
        }
        out.emplace(spec.name, std::move(t));
    }
    return out;
}

}  // namespace attnforge::testing
