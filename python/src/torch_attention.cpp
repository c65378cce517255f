#include "torch_attention.hpp"

#include "torch_tensors.hpp"
#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/run.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnforge::python {

namespace {

thread_local TorchCall last_call;

// A shape as Python prints a tuple: "(2, 4, 9)", "(9,)".
std::string tuple_text(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

std::string error(const std::string& text) {
    return "attnforge: " + text;
}

bool row_major(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides) {
    std::int64_t expected = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
        if (shape[d] != 1 && strides[d] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

std::size_t item_size(TorchType t) {
    return t == TorchType::float32 ? 4 : t == TorchType::boolean ? 1 : 2;
}

// A tensor as a kernel input of element type `dtype`: in place through its strides where a kernel can read them
// (rows of the last axis contiguous), else a row-major copy of its elements into `copy`.
runtime::TensorView view_of(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                            const void* data, TorchType type, dsl::element_type dtype,
                            std::vector<std::uint8_t>& copy) {
    runtime::TensorView view{shape, dtype, data, {}};
    if (row_major(shape, strides)) return view;
    if (runtime::stride_problem(shape, strides, false).empty()) {
        view.strides = strides;
        return view;
    }
    const std::size_t item = item_size(type);
    const auto n = static_cast<std::size_t>(dsl::element_count(shape));
    copy.resize(std::max<std::size_t>(n, 1) * item);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t at = runtime::strided_offset(shape, strides, static_cast<std::int64_t>(i));
        std::memcpy(copy.data() + i * item,
                    static_cast<const std::uint8_t*>(data) + at * static_cast<std::int64_t>(item), item);
    }
    view.data = copy.data();
    return view;
}

// torch's checks of query, key, value and the mask (the messages say what torch would refuse and why).
void check_arguments(const TorchTensor& q, const TorchTensor& k, const TorchTensor& v, const TorchTensor* mask,
                     bool is_causal, bool enable_gqa) {
    const std::pair<const char*, const TorchTensor*> tensors[] = {{"query", &q}, {"key", &k}, {"value", &v}};
    for (const auto& [name, t] : tensors) {
        if (t->shape.size() != 4)
            throw input_error(error(std::string(name) + " must be (B, H, L, E), got shape " + tuple_text(t->shape)));
        if (t->type == TorchType::boolean || t->type == TorchType::other)
            throw input_error(error(std::string(name) + " has dtype " + torch_dtype_name(*t) +
                                    "; expected float32, bfloat16 or float16"));
    }
    if (q.type != k.type || q.type != v.type)
        throw input_error(error("query, key and value must have one dtype (as torch requires), got " +
                                torch_dtype_name(q) + ", " + torch_dtype_name(k) + ", " + torch_dtype_name(v)));
    if (k.shape != v.shape)
        throw input_error(error("key " + tuple_text(k.shape) + " and value " + tuple_text(v.shape) +
                                " must have one shape (a value head width other than the query's is not built)"));
    if (k.shape[0] != q.shape[0] || k.shape[3] != q.shape[3])
        throw input_error(
            error("key " + tuple_text(k.shape) + " does not match query " + tuple_text(q.shape) + " in B or E"));
    const std::int64_t Hq = q.shape[1], Hkv = k.shape[1];
    if (Hkv != Hq && !enable_gqa)
        throw input_error(error("query has " + std::to_string(Hq) + " heads and key " + std::to_string(Hkv) +
                                ": pass enable_gqa=True for grouped-query attention (as torch requires)"));
    if (Hkv == 0 || Hq % Hkv)
        throw input_error(error("query heads (" + std::to_string(Hq) + ") must be a multiple of key/value heads (" +
                                std::to_string(Hkv) + ")"));
    if (!mask) return;
    if (is_causal)
        throw input_error(
            error("attn_mask and is_causal=True are exclusive (as in torch); put the causal pattern "
                  "into the mask"));
    if (mask->type != TorchType::boolean && mask->type != q.type)
        throw input_error(error("attn_mask must be bool or query's dtype (" + torch_dtype_name(q) + "), got " +
                                torch_dtype_name(*mask)));
    const std::vector<std::int64_t> target = {q.shape[0], Hq, q.shape[2], k.shape[2]};
    bool broadcasts = mask->shape.size() <= 4;
    for (std::size_t i = 0; broadcasts && i < mask->shape.size(); ++i) {
        const std::int64_t m = mask->shape[mask->shape.size() - 1 - i], t = target[3 - i];
        broadcasts = m == 1 || m == t;
    }
    if (!broadcasts)
        throw input_error(error("attn_mask of shape " + tuple_text(mask->shape) +
                                " does not broadcast to (B, H, Lq, Lk) = " + tuple_text(target)));
}

void refuse_gradients(const TorchTensor& q, const TorchTensor& k, const TorchTensor& v, const TorchTensor* mask) {
    const std::pair<const char*, const TorchTensor*> tensors[] = {
        {"query", &q}, {"key", &k}, {"value", &v}, {"attn_mask", mask}};
    for (const auto& [name, t] : tensors)
        if (t && t->requires_grad && torch_grad_enabled())
            throw input_error(error(std::string(name) +
                                    " requires grad; attnforge computes the forward pass only (run under "
                                    "torch.no_grad() or torch.inference_mode())"));
}

// The built-in variant that computes these arguments' attention (docs/pytorch.md has the table). Decode forms (a
// cache with kv_length, bottom-right causal) only where that changes nothing: Lq = 1 with kv_length = Lk sees
// every key, as torch's call without is_causal does.
std::string_view variant_for(bool has_mask, bool mask_is_bool, bool is_causal, bool softcap, std::int64_t Lq) {
    if (softcap) {
        if (!has_mask) {
            if (is_causal) return "softcap_attention";
            if (Lq == 1) return "decode_softcap";
            throw input_error(
                error("soft-capped attention without a mask is built causal (softcap_attention) or "
                      "for one query over a cache (decode_softcap); for Lq > 1 without causality, give "
                      "an attn_mask"));
        }
        if (!mask_is_bool)
            throw input_error(
                error("soft-capped attention takes a bool attn_mask (softcap_masked); an additive "
                      "float mask is not built with a soft-cap"));
        return Lq == 1 ? "decode_softcap_masked" : "softcap_masked";
    }
    if (!has_mask) return is_causal ? "sdpa_causal" : Lq == 1 ? "decode" : "sdpa";
    if (!mask_is_bool) return "sdpa_additive";
    return Lq == 1 ? "decode_masked" : "sdpa_masked";
}

// The mask as the kernels take it: (B or 1, H or 1, Lq, Lk), broadcast axes of Lq and Lk as strides of 0.
void broadcast_mask(TorchTensor& m, std::int64_t Lq, std::int64_t Lk) {
    while (m.shape.size() < 4) {
        m.shape.insert(m.shape.begin(), 1);
        m.strides.insert(m.strides.begin(), 0);
    }
    const std::int64_t target[] = {0, 0, Lq, Lk};
    for (std::size_t d = 2; d < 4; ++d)
        if (m.shape[d] == 1 && target[d] != 1) {
            m.shape[d] = target[d];
            m.strides[d] = 0;
        }
}

struct LiveKeys {
    std::int64_t count;  // keys up to the last one any query keeps
    bool all_kept;       // every pair before that kept
};

// For a bool mask (B or 1, H or 1, Lq, Lk): the keys no query keeps past the last kept one are not read at all (a
// static cache's empty slots), and a mask that keeps every pair left is no mask at Lq = 1 (one token over a cache
// without padding).
LiveKeys live_keys(const TorchTensor& m) {
    const auto* base = static_cast<const std::uint8_t*>(m.data);
    const std::int64_t Lk = m.shape[3];
    std::int64_t live = 0;
    for (std::int64_t b = 0; b < m.shape[0]; ++b)
        for (std::int64_t h = 0; h < m.shape[1]; ++h)
            for (std::int64_t i = 0; i < m.shape[2]; ++i) {
                const std::uint8_t* row = base + b * m.strides[0] + h * m.strides[1] + i * m.strides[2];
                for (std::int64_t j = Lk; j-- > live;)
                    if (row[j * m.strides[3]]) {
                        live = j + 1;
                        break;
                    }
            }
    bool all = true;
    for (std::int64_t b = 0; all && b < m.shape[0]; ++b)
        for (std::int64_t h = 0; all && h < m.shape[1]; ++h)
            for (std::int64_t i = 0; all && i < m.shape[2]; ++i) {
                const std::uint8_t* row = base + b * m.strides[0] + h * m.strides[1] + i * m.strides[2];
                for (std::int64_t j = 0; all && j < live; ++j) all = row[j * m.strides[3]] != 0;
            }
    return {live, all};
}

void fill(void* data, std::size_t count, std::size_t item, float value) {
    if (value == 0.0f) {
        std::memset(data, 0, count * item);
        return;
    }
    for (std::size_t i = 0; i < count; ++i) static_cast<float*>(data)[i] = value;  // float32 only
}

}  // namespace

nb::tuple torch_attention(nb::handle query, nb::handle key, nb::handle value, nb::handle attn_mask, bool is_causal,
                          std::optional<double> scale, std::optional<double> softcap, bool enable_gqa, bool return_lse,
                          bool heads_last) {
    const TorchTensor q = read_torch_tensor(query, "query");
    const TorchTensor k = read_torch_tensor(key, "key");
    const TorchTensor v = read_torch_tensor(value, "value");
    std::optional<TorchTensor> mask;
    if (!attn_mask.is_none()) {
        if (!is_torch_tensor(attn_mask)) throw input_error(error("attn_mask must be a CPU torch.Tensor"));
        mask = read_torch_tensor(attn_mask, "attn_mask");
    }
    refuse_gradients(q, k, v, mask ? &*mask : nullptr);
    check_arguments(q, k, v, mask ? &*mask : nullptr, is_causal, enable_gqa);

    const std::int64_t B = q.shape[0], Hq = q.shape[1], Lq = q.shape[2], E = q.shape[3], Hkv = k.shape[1];
    std::int64_t Lk = k.shape[2];
    if (mask) broadcast_mask(*mask, Lq, Lk);
    if (mask && mask->type == TorchType::boolean && Lq <= 16 && Lk > 0 && dsl::element_count(mask->shape) > 0) {
        const LiveKeys live = live_keys(*mask);
        Lk = live.count;
        mask->shape[3] = Lk;
        if (Lq == 1 && Lk > 0 && live.all_kept) mask.reset();
    }
    const std::string_view variant =
        variant_for(mask.has_value(), mask && mask->type == TorchType::boolean, is_causal, softcap.has_value(), Lq);

    const dsl::element_type storage = storage_of(q.type);
    std::vector<std::uint8_t> copies[4];
    runtime::ViewMap inputs;
    inputs.emplace("q", view_of(q.shape, q.strides, q.data, q.type, storage, copies[0]));
    const std::vector<std::int64_t> kv_shape = {B, Hkv, Lk, E};
    inputs.emplace("k", view_of(kv_shape, k.strides, k.data, k.type, storage, copies[1]));
    inputs.emplace("v", view_of(kv_shape, v.strides, v.data, v.type, storage, copies[2]));
    if (mask)
        inputs.emplace("attn_mask",
                       view_of(mask->shape, mask->strides, mask->data, mask->type,
                               mask->type == TorchType::boolean ? dsl::element_type::boolean : storage, copies[3]));
    // Small inputs in the caller's stack: no torch operator (and its thread pool) for them.
    const std::vector<std::int32_t> kv_length(static_cast<std::size_t>(B), static_cast<std::int32_t>(Lk));
    if (variant.starts_with("decode"))
        inputs.emplace("kv_length", runtime::TensorView{{B}, dsl::element_type::int32, kv_length.data(), {}});
    const float scale_value = static_cast<float>(scale.value_or(0.0));
    const float cap_value = static_cast<float>(softcap.value_or(0.0));
    if (scale) inputs.emplace("scale", runtime::TensorView{{}, dsl::element_type::float32, &scale_value, {}});
    if (softcap) inputs.emplace("cap", runtime::TensorView{{}, dsl::element_type::float32, &cap_value, {}});

    // The output: (B, Lq, Hq, E) written as the (B, Hq, Lq, E) result through its strides when heads_last.
    const std::vector<std::int64_t> result_shape = {B, Hq, Lq, E};
    void* out_data = nullptr;
    nb::object out = torch_empty(heads_last ? std::vector<std::int64_t>{B, Lq, Hq, E} : result_shape, q.type, &out_data);
    runtime::OutputView out_view{result_shape, storage, out_data, {}};
    if (heads_last) out_view.strides = {Lq * Hq * E, E, Hq * E, 1};
    nb::object lse = nb::none();
    void* lse_data = nullptr;
    if (return_lse) {
        lse = torch_empty({B, Hq, Lq}, TorchType::float32, &lse_data);
    }

    const std::string_view dtype = dsl::element_type_name(storage);
    if (Lk == 0) {  // no key to attend to: fully masked rows, zeros (torch gives NaN), a log-sum-exp of -inf
        fill(out_view.data, static_cast<std::size_t>(B * Hq * Lq * E), item_size(q.type), 0.0f);
        if (return_lse)
            fill(lse_data, static_cast<std::size_t>(B * Hq * Lq), 4, -std::numeric_limits<float>::infinity());
        last_call = {variant, "", dtype, std::move(inputs)};
        return nb::make_tuple(out, lse);
    }
    runtime::RunOptions options;
    options.dtype = dtype;
    // The kernel for these sizes, picked by them as read off the views (every variant above has the sequences q
    // and kv): evaluate_into checks every input against the kernel before it touches memory, so they are not
    // checked a second time here (select_kernel's check of the views took ~1.2 of a decode call's ~5 µs outside
    // its kernel, Lk = 1).
    dsl::RuntimeSizes sizes;
    sizes.batch = B;
    sizes.heads = Hq;
    sizes.kv_heads = Hkv;
    sizes.head_width = E;
    sizes.sequence_length = {{"q", Lq}, {"kv", Lk}};
    const runtime::KernelEntry& kernel = runtime::select_kernel(variant, sizes, "output", dtype);
    const runtime::KernelEntry* lse_kernel = nullptr;
    if (return_lse) lse_kernel = &runtime::select_kernel(variant, sizes, "logsumexp", dtype);
    double kernel_seconds = 0;
    {
        nb::gil_scoped_release unlocked;
        const auto started = std::chrono::steady_clock::now();
        runtime::evaluate_into(kernel, inputs, out_view, options);
        if (lse_kernel) {
            runtime::RunOptions lse_options = options;
            lse_options.result = "logsumexp";
            runtime::evaluate_into(*lse_kernel, inputs, {{B, Hq, Lq}, dsl::element_type::float32, lse_data, {}},
                                   lse_options);
        }
        kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
    last_call = {variant, kernel.name, dtype, std::move(inputs), kernel_seconds};  // moved: no work for the hook
    return nb::make_tuple(out, lse);
}

const TorchCall& last_torch_call() {
    return last_call;
}

}  // namespace attnforge::python
