#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/errors.hpp>
#include <attnforge/runtime/call_threads.hpp>
#include <attnforge/runtime/halide_buffer.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/runtime/scratch_memory.hpp>
#include <attnforge/runtime/tile_permission.hpp>

#include <HalideBuffer.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnforge::runtime {

namespace {

// ATTNFORGE_MAX_ISA=avx2|baseline caps what multi-target kernels may use (their dispatcher asks
// halide_can_use_target_features): for testing the fallbacks of a multi-target build on a newer CPU,
// and for comparing instruction sets. Unset: whatever the CPU has.
int max_isa_level() {
    static const int level = [] {
        const char* v = std::getenv("ATTNFORGE_MAX_ISA");
        if (!v || !*v) return 2;
        const std::string s(v);
        if (s == "avx512") return 2;
        if (s == "avx2") return 1;
        if (s == "baseline") return 0;
        throw std::invalid_argument("ATTNFORGE_MAX_ISA must be avx512, avx2 or baseline, given '" + s + "'");
    }();
    return level;
}

int capped_can_use_target_features(int count, const std::uint64_t* features) {
    auto wants = [&](int f) { return f / 64 < count && (features[f / 64] >> (f % 64)) & 1; };
    const int level = max_isa_level();
    if (level < 2)
        for (int f :
             {halide_target_feature_avx512, halide_target_feature_avx512_knl, halide_target_feature_avx512_skylake,
              halide_target_feature_avx512_cannonlake, halide_target_feature_avx512_zen4,
              halide_target_feature_avx512_zen5, halide_target_feature_avx512_sapphirerapids})
            if (wants(f)) return 0;
    if (level < 1)
        for (int f : {halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_fma,
                      halide_target_feature_f16c, halide_target_feature_sse41, halide_target_feature_avxvnni})
            if (wants(f)) return 0;
    return halide_default_can_use_target_features(count, features);
}

const bool isa_cap_installed = [] {
    if (max_isa_level() < 2) halide_set_custom_can_use_target_features(capped_can_use_target_features);
    return true;
}();

// Kernels are built without Halide's large_buffers feature: every buffer they touch must span fewer
// than 2^31 bytes (Halide checks it too, but only after the caller has allocated the output).
void check_addressable(const KernelEntry& k, const std::string& what, const std::vector<std::int64_t>& shape,
                       std::int64_t item) {
    const std::int64_t n = dsl::element_count(shape);
    if (n > std::numeric_limits<std::int32_t>::max() / item)
        throw input_error(std::string(k.variant) + ": " + what + " of shape " + dsl::shape_string(shape) + " spans " +
                          std::to_string(n) + " × " + std::to_string(item) +
                          " bytes; a kernel buffer must span less than 2 GiB");
}

// A Tensor's values must be as many as its shape says (a view's are, by construction).
void check_held(const KernelEntry& k, const TensorMap& inputs) {
    for (const auto& [name, t] : inputs) {
        const std::size_t held = t.held();
        if (static_cast<std::int64_t>(held) != t.element_count())
            throw input_error(std::string(k.variant) + ": input '" + name + "' holds " + std::to_string(held) +
                              " values but its shape " + dsl::shape_string(t.shape) + " needs " +
                              std::to_string(t.element_count()));
    }
}

// of_width: whether the kernel itself must serve the inputs' head width (false where k only checks the inputs for
// select_kernel, which then picks a kernel of their width).
dsl::RuntimeSizes check_inputs(const KernelEntry& k, const dsl::graph_signature& sig, const ViewMap& inputs,
                               bool of_width = true) {
    dsl::ShapeMap shapes;
    for (const auto& [name, t] : inputs) shapes.emplace(name, t.shape);
    const dsl::RuntimeSizes sizes = dsl::check_shapes(sig, shapes);
    // A kernel of a run-time-E variant is generated for one head width (select_kernel picks by it).
    if (of_width && k.head_width && sizes.head_width >= 0 && sizes.head_width != k.head_width)
        throw input_error("kernel " + std::string(k.name) + " is for head width E=" + std::to_string(k.head_width) +
                          ", given E=" + std::to_string(sizes.head_width));
    for (const auto& spec : sig.inputs) {
        if (!inputs.contains(spec.name)) continue;  // an optional input not given (check_shapes let it be)
        const TensorView& t = inputs.find(spec.name)->second;
        // The graph's float32 tensors come in the kernel's storage type, or in a type of their own.
        const dsl::element_type expected = input_dtype(k, spec);
        if (t.dtype != expected)
            throw input_error(
                std::string(k.variant) + ": input '" + spec.name + "' must be " + dsl::element_type_name(expected) +
                (expected == spec.dtype ? "" : " (its type in kernel " + std::string(k.name) + ")") +
                ", given " + dsl::element_type_name(t.dtype));
        check_addressable(k, "input '" + spec.name + "'", t.shape, static_cast<std::int64_t>(t.item_bytes()));
        if (const std::string problem = stride_problem(t.shape, t.strides, false); !problem.empty())
            throw input_error(std::string(k.variant) + ": input '" + spec.name + "' is a strided view with " + problem);
        dsl::check_input_values(sig, spec, sizes, t.element_count(),
                                [&](std::int64_t i) { return t.value(static_cast<std::size_t>(i)); });
    }
    check_addressable(k, "its " + std::string(k.result), sizes.shape_of(k.result_spec()),
                      result_dtype(k) == dsl::element_type::float32 ? 4 : 2);
    return sizes;
}

}  // namespace

void set_default_threads(int threads) {
    if (threads < 0) throw input_error("threads must be 0 (one per core) or more, given " + std::to_string(threads));
    call_threads::set_default(threads);
}

std::vector<std::string_view> variants() {
    std::vector<std::string_view> out;
    for (const KernelEntry& k : registry())
        if (std::find(out.begin(), out.end(), k.variant) == out.end()) out.push_back(k.variant);
    return out;
}

namespace {

// The registry's kernels by variant, each list in registry order. kernels_for runs on every call (select_kernel:
// two or three times), and a scan of all the build's kernels with string compares took ~1 µs of a 15 µs decode call.
const std::vector<const KernelEntry*>& kernels_of_variant(std::string_view variant) {
    static const std::unordered_map<std::string_view, std::vector<const KernelEntry*>> by_variant = [] {
        std::unordered_map<std::string_view, std::vector<const KernelEntry*>> m;
        for (const KernelEntry& k : registry()) m[k.variant].push_back(&k);
        return m;
    }();
    static const std::vector<const KernelEntry*> none;
    const auto it = by_variant.find(variant);
    return it == by_variant.end() ? none : it->second;
}

}  // namespace

std::vector<const KernelEntry*> kernels_for(std::string_view variant, std::string_view result, std::string_view dtype,
                                            std::string_view input_types) {
    std::vector<const KernelEntry*> out;
    for (const KernelEntry* k : kernels_of_variant(variant))
        if (k->result == result && k->storage == dtype && k->input_types == input_types) out.push_back(k);
    return out;
}

dsl::element_type input_dtype(const KernelEntry& k, const dsl::tensor_spec& spec) {
    // Parameters (a scale, a cap, ALiBi's slopes) are float32 in every kernel, not stored tensors.
    if (spec.dtype != dsl::element_type::float32 || spec.is_parameter()) return spec.dtype;
    return own_input_type(k.input_types, spec.name).value_or(storage_type_named(k.storage));
}

std::string input_types_of(const dsl::graph_signature& signature, const ViewMap& inputs, std::string_view dtype) {
    std::vector<std::string> own;
    for (const auto& spec : signature.inputs) {
        auto it = inputs.find(spec.name);
        if (spec.dtype != dsl::element_type::float32 || it == inputs.end() || !is_storage_type(it->second.dtype) ||
            dsl::element_type_name(it->second.dtype) == dtype)
            continue;
        own.push_back(spec.name + "=" + dsl::element_type_name(it->second.dtype));
    }
    std::sort(own.begin(), own.end());
    std::string out;
    for (const auto& word : own) out += (out.empty() ? "" : " ") + word;
    return out;
}

const KernelEntry& first_kernel(std::string_view variant, std::string_view result, std::string_view dtype) {
    const auto candidates = kernels_for(variant, result, dtype);
    if (candidates.empty()) {
        std::string known;
        for (std::string_view v : variants()) known += (known.empty() ? "" : ", ") + std::string(v);
        if (kernels_for(variant, "output").empty())
            throw input_error("unknown variant '" + std::string(variant) + "'; known: " + known);
        storage_type_named(dtype);  // a storage type that is not one says so
        throw input_error("variant '" + std::string(variant) + "' has no kernel for its " + std::string(result) +
                          (dtype == "float32" ? ""
                                              : " in " + std::string(dtype) +
                                                    " (generated/kernels.list gives it none, or this build left them "
                                                    "out: -DATTNFORGE_STORAGE_TYPES, docs/setup.md)"));
    }
    return *candidates.front();
}

dsl::element_type result_dtype(const KernelEntry& k) {
    return k.result == "logsumexp" ? dsl::element_type::float32 : storage_type_named(k.storage);
}

namespace {

// Each registry kernel's size class parsed and the names of its attention's two sequences, once for the process:
// select_kernel runs on every call, where parsing the classes and copying the names cost ~0.3 µs of a decode call's
// ~2 µs outside its kernel (the PyTorch front door, Lk = 1).
struct KernelSizeClass {
    std::optional<catalogue::SizeBounds> bounds;
    std::string query, key;
};

const KernelSizeClass& size_class_of(const KernelEntry& k) {
    static const std::vector<KernelSizeClass> classes = [] {
        std::vector<KernelSizeClass> v;
        for (const KernelEntry& entry : registry()) {
            const dsl::attention_sequences_t seq = dsl::attention_sequences(entry.attention_weights_spec());
            v.push_back({catalogue::parse_size_class(entry.size_class), seq.query, seq.key});
        }
        return v;
    }();
    return classes.at(static_cast<std::size_t>(&k - registry().data()));
}

bool holds(const KernelEntry& k, const dsl::RuntimeSizes& sizes) {
    const KernelSizeClass& c = size_class_of(k);
    if (!c.bounds) throw std::logic_error("kernel list: '" + std::string(k.size_class) + "' is not a size class");
    auto length = [&](const std::string& name) {
        const auto it = sizes.sequence_length.find(name);
        return it == sizes.sequence_length.end() ? std::int64_t{0} : it->second;
    };
    return catalogue::bounds_hold(*c.bounds, length(c.key), length(c.query));
}

}  // namespace

const KernelEntry& select_kernel(std::string_view variant, const dsl::RuntimeSizes& sizes, std::string_view result,
                                 std::string_view dtype, std::string_view input_types) {
    // The first kernel of the call's head width whose size class holds, else the last of that width, in registry
    // order: one pass over the variant's kernels, allocating nothing. No kernel of that width: the errors below.
    const KernelEntry* last_of_width = nullptr;
    for (const KernelEntry* k : kernels_of_variant(variant)) {
        if (k->result != result || k->storage != dtype || k->input_types != input_types) continue;
        if (k->head_width != 0 && sizes.head_width >= 0 && k->head_width != sizes.head_width) continue;
        if (holds(*k, sizes)) return *k;
        last_of_width = k;
    }
    if (last_of_width) return *last_of_width;
    const auto candidates = kernels_for(variant, result, dtype, input_types);
    if (candidates.empty() && !input_types.empty())
        throw input_error("variant '" + std::string(variant) + "' has no " + std::string(dtype) + " kernel for its " +
                          std::string(result) + " taking " + std::string(input_types));
    if (candidates.empty()) return first_kernel(variant, result, dtype);  // throws, saying why
    // Kernels, but none of the call's run-time head width (one per width of the lines' E lists).
    std::vector<int> widths;
    for (const KernelEntry* k : candidates)
        if (k->head_width && std::find(widths.begin(), widths.end(), k->head_width) == widths.end())
            widths.push_back(k->head_width);
    // A width the variant cannot serve (its scales are per G channels, E not a multiple of G): no build makes it.
    for (const dsl::tensor_spec& spec : candidates.front()->signature().inputs)
        for (const dsl::dim_spec& d : spec.dims)
            if (d.role == dsl::dim_spec::axis::head_width_groups && sizes.head_width % d.size != 0)
                throw input_error("variant '" + std::string(variant) + "' reads '" + spec.name + "' as a scale per " +
                                  std::to_string(d.size) + " channels: its head width E must be a multiple of " +
                                  std::to_string(d.size) + ", given E=" + std::to_string(sizes.head_width));
    std::string made, option;
    for (int w : widths) {
        made += (made.empty() ? "" : ", ") + std::to_string(w);
        option += std::to_string(w) + ",";
    }
    throw input_error("variant '" + std::string(variant) + "' has no " + std::string(dtype) + " kernel for its " +
                      std::string(result) + " at head width E=" + std::to_string(sizes.head_width) +
                      "; this build made E = " + made + " (a build configured with -DATTNFORGE_HEAD_WIDTHS=" + option +
                      std::to_string(sizes.head_width) + " makes it: docs/setup.md)");
}

const KernelEntry& select_kernel(std::string_view variant, const ViewMap& inputs, std::string_view result,
                                 std::string_view dtype) {
    const KernelEntry& first = first_kernel(variant, result, dtype);
    // Inputs in several float types: the kernels that take exactly those, where the build has some (else the
    // check below says which input is not of the storage type).
    const std::string own = input_types_of(first.signature(), inputs, dtype);
    const auto mixed = own.empty() ? std::vector<const KernelEntry*>{} : kernels_for(variant, result, dtype, own);
    const KernelEntry& checked_by = mixed.empty() ? first : *mixed.front();
    return select_kernel(variant, check_inputs(checked_by, first.signature(), inputs, false), result, dtype,
                         mixed.empty() ? "" : own);
}

const KernelEntry& select_kernel(std::string_view variant, const TensorMap& inputs, std::string_view result,
                                 std::string_view dtype) {
    check_held(first_kernel(variant, result, dtype), inputs);
    return select_kernel(variant, views_of(inputs), result, dtype);
}

std::vector<std::int64_t> result_shape(const KernelEntry& k, const ViewMap& inputs) {
    return check_inputs(k, k.signature(), inputs).shape_of(k.result_spec());
}

namespace {

// Halide's default error handler prints and calls abort(). Ours keeps the message for the exception
// the failing call throws: on the calling thread (argument and bounds checks), or on a worker for a failed
// allocation inside a parallel task, whose text the pool hands to the call (call_threads.hpp).
void keep_halide_error(void*, const char* message) {
    call_threads::error_text() = message;
}

void install_error_handler() {
    static const bool installed = (halide_set_error_handler(keep_halide_error), true);
    (void)installed;
}

// run.hpp, last_call_addresses: written by every call on its own thread, read by the same thread. Pointers
// only (the names come from the kernel's signature when asked): a call allocates nothing for it.
struct LastCall {
    const KernelEntry* kernel = nullptr;
    std::vector<const void*> hosts;  // the inputs' in signature order, then the result's
};
thread_local LastCall last_call;

// Calls the kernel on inputs already checked by check_inputs and an output of the right shape.
void call_kernel(const KernelEntry& k, const ViewMap& inputs, const OutputView& out, const RunOptions& options) {
    last_call.kernel = nullptr;
    if (dsl::element_count(out.shape) == 0) return;  // an empty batch or query sequence: nothing to compute
    // An empty input with a non-empty result is an empty key sequence (every width is fixed): rows
    // with no key to attend to are fully masked. Kernels read their inputs clamped, which needs at least
    // one element; the reference engine answers this case (engine.hpp), the runtime says so.
    for (const auto& [name, t] : inputs)
        if (t.element_count() == 0)
            throw no_keys_error(std::string(k.variant) + ": input '" + name + "' of shape " +
                                dsl::shape_string(t.shape) +
                                " is empty but the result is not (no keys to attend to): a kernel needs at least "
                                "one key; evaluate with the reference engine (attnforge/runtime/engine.hpp), whose "
                                "answer is that of fully masked rows");
    install_error_handler();
    scratch::install();
    request_amx_tiles();
    const dsl::graph_signature& sig = k.signature();
    std::vector<std::vector<halide_dimension_t>> dims(sig.inputs.size() + 1);
    std::vector<halide_buffer_t> buffers(sig.inputs.size() + 1);
    std::vector<void*> args;
    // Optional inputs the call did not give (a scale, a window, ALiBi's slopes): their default, made for this call
    // in the input's type (a scale 1/√E of the kernel's E: a kernel serves one width; slopes for the call's H). The
    // record of the call's addresses leaves them out (nullptr).
    std::vector<std::vector<std::int32_t>> defaults(sig.inputs.size());  // float32 or int32 values, 4 bytes each
    dsl::RuntimeSizes default_sizes;
    default_sizes.head_width = k.head_width;
    last_call.kernel = &k;
    last_call.hosts.resize(buffers.size());
    for (std::size_t i = 0; i < sig.inputs.size(); ++i) {
        const auto given = inputs.find(sig.inputs[i].name);
        if (given == inputs.end()) {
            const dsl::tensor_spec& spec = sig.inputs[i];
            if (dsl::default_needs_sizes(spec)) {
                dsl::ShapeMap shapes;
                for (const auto& [name, t] : inputs) shapes.emplace(name, t.shape);
                default_sizes = dsl::check_shapes(sig, shapes);
                if (k.head_width) default_sizes.head_width = k.head_width;
            }
            const std::vector<double> values = dsl::default_input_values(sig, spec, default_sizes);
            std::vector<std::int32_t>& held = defaults[i];
            held.resize(values.size());
            for (std::size_t j = 0; j < values.size(); ++j) {
                const float f = static_cast<float>(values[j]);
                if (spec.dtype == dsl::element_type::int32)
                    held[j] = static_cast<std::int32_t>(values[j]);
                else
                    std::memcpy(&held[j], &f, sizeof f);
            }
            const std::vector<std::int64_t> shape = spec.dims.empty()
                                                        ? std::vector<std::int64_t>{}
                                                        : std::vector<std::int64_t>{std::int64_t(values.size())};
            buffers[i] = describe(held.data(), spec.dtype, shape, dims[i]);
        } else {
            buffers[i] =
                describe(given->second.data, given->second.dtype, given->second.shape, dims[i], given->second.strides);
        }
        last_call.hosts[i] = given == inputs.end() ? nullptr : buffers[i].host;
        args.push_back(&buffers[i]);
    }
    buffers.back() = describe(out.data, out.dtype, out.shape, dims.back(), out.strides);
    args.push_back(&buffers.back());
    last_call.hosts.back() = buffers.back().host;

    // The call's thread count, for every parallel loop of its entry points (call_threads.hpp): calls on
    // other threads run at the same time, each with its own count.
    const call_threads::Budget threads(options.threads > 0 ? options.threads : call_threads::default_count());
    auto invoke = [&](int (*entry)(void**), void** call_args, const char* what) {
        const int status = entry(call_args);
        if (status != 0) {
            std::string message = std::exchange(call_threads::error_text(), {});
            while (!message.empty() && message.back() == '\n') message.pop_back();
            throw std::runtime_error("kernel " + std::string(k.name) + what + " failed with Halide error " +
                                     std::to_string(status) + (message.empty() ? "" : ": " + message));
        }
    };

    // A block_mask kernel takes one more input, the ranges of live key blocks per query tile, made by
    // its pre-pass from the same inputs. Its size is the kernel's to say: Halide's bounds query (a
    // buffer without memory) returns the region the kernel reads.
    std::vector<std::int32_t> ranges;
    halide_dimension_t ranges_dims[4] = {};
    halide_buffer_t ranges_buffer{};
    if (k.prepass_argv) {
        ranges_buffer.type = halide_type_t(halide_type_int, 32);
        ranges_buffer.dimensions = 4;
        ranges_buffer.dim = ranges_dims;
        std::vector<void*> query = args;
        query.insert(query.end() - 1, &ranges_buffer);
        invoke(k.argv, query.data(), " (bounds query)");
        std::int32_t stride = 1;
        for (halide_dimension_t& d : ranges_dims) {
            d.stride = stride;
            stride *= d.extent;
        }
        if (stride <= 0)  // cannot happen for a non-empty output (checked above); never call with no memory
            throw std::runtime_error("kernel " + std::string(k.name) +
                                     ": the bounds query gave no block ranges to compute");
        ranges.resize(static_cast<std::size_t>(stride));
        ranges_buffer.host = reinterpret_cast<std::uint8_t*>(ranges.data());
        std::vector<void*> prepass(args.begin(), args.end() - 1);
        prepass.push_back(&ranges_buffer);
        invoke(k.prepass_argv, prepass.data(), " (pre-pass)");
        args.insert(args.end() - 1, &ranges_buffer);
    }
    invoke(k.argv, args.data(), "");
}

}  // namespace

Tensor run(std::string_view variant, const TensorMap& inputs, const RunOptions& options) {
    return run_kernel(select_kernel(variant, inputs, options.result, options.dtype), inputs, options);
}

Tensor result_tensor(const KernelEntry& k, const ViewMap& inputs) {
    const std::vector<std::int64_t> shape = result_shape(k, inputs);
    const dsl::element_type dtype = result_dtype(k);
    return dtype == dsl::element_type::float32 ? Tensor::float32(shape) : Tensor::storage16(dtype, shape);
}

Tensor run_kernel(const KernelEntry& k, const TensorMap& inputs, const RunOptions& options) {
    check_held(k, inputs);
    const ViewMap views = views_of(inputs);
    Tensor out = result_tensor(k, views);
    call_kernel(k, views, output_view_of(out), options);
    return out;
}

void run_kernel_into(const KernelEntry& k, const ViewMap& inputs, const OutputView& out, const RunOptions& options) {
    const std::vector<std::int64_t> expected = result_shape(k, inputs);
    const dsl::element_type dtype = result_dtype(k);
    if (out.dtype != dtype || out.shape != expected)
        throw input_error("output of " + std::string(k.name) + ": expected " + dsl::element_type_name(dtype) + " " +
                          dsl::shape_string(expected) + ", given " + dsl::element_type_name(out.dtype) + " " +
                          dsl::shape_string(out.shape));
    if (const std::string problem = stride_problem(out.shape, out.strides, true); !problem.empty())
        throw input_error("output of " + std::string(k.name) + ": a strided view with " + problem);
    call_kernel(k, inputs, out, options);
}

std::map<std::string, const void*> last_call_addresses() {
    std::map<std::string, const void*> out;
    if (!last_call.kernel) return out;
    const dsl::graph_signature& sig = last_call.kernel->signature();
    for (std::size_t i = 0; i < sig.inputs.size(); ++i)
        if (last_call.hosts[i]) out.emplace(sig.inputs[i].name, last_call.hosts[i]);  // not a default it made
    out.emplace("", last_call.hosts.back());
    return out;
}

void run_kernel_into(const KernelEntry& k, const TensorMap& inputs, Tensor& out, const RunOptions& options) {
    check_held(k, inputs);
    const std::size_t held = out.held();
    if (static_cast<std::int64_t>(held) != out.element_count())
        throw input_error("output of " + std::string(k.name) + ": its shape " + dsl::shape_string(out.shape) +
                          " needs " + std::to_string(out.element_count()) + " values, it holds " +
                          std::to_string(held));
    run_kernel_into(k, views_of(inputs), output_view_of(out), options);
}

}  // namespace attnforge::runtime
