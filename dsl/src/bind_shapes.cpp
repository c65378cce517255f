#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/errors.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace attnforge::dsl {

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape)
        if (d < 0) throw input_error("shape " + shape_string(shape) + " has a negative size");
    for (std::int64_t d : shape) {
        if (d == 0) return 0;
        if (n > std::numeric_limits<std::int64_t>::max() / d)
            throw input_error("shape " + shape_string(shape) + " has more elements than fit in 64 bits");
        n *= d;
    }
    return n;
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

namespace {

// The run-time count an axis other than a sequence's or a fixed one is bound to.
std::int64_t RuntimeSizes::* count_of(dim_spec::axis role) {
    switch (role) {
        case dim_spec::axis::batch:
            return &RuntimeSizes::batch;
        case dim_spec::axis::heads:
            return &RuntimeSizes::heads;
        case dim_spec::axis::kv_heads:
            return &RuntimeSizes::kv_heads;
        case dim_spec::axis::head_width:
            return &RuntimeSizes::head_width;
        default:
            return nullptr;
    }
}

}  // namespace

std::vector<std::int64_t> RuntimeSizes::shape_of(const tensor_spec& spec) const {
    std::vector<std::int64_t> shape;
    for (const dim_spec& d : spec.dims) {
        if (d.role == dim_spec::axis::fixed) {
            shape.push_back(d.size);
        } else if (d.role == dim_spec::axis::sequence) {
            auto it = sequence_length.find(d.sequence);
            shape.push_back(it == sequence_length.end() ? -1 : it->second);
        } else if (d.role == dim_spec::axis::head_width_groups) {
            shape.push_back(head_width >= 0 ? head_width / d.size : -1);
        } else if (d.role == dim_spec::axis::sequence_blocks) {
            auto it = sequence_length.find(d.sequence);
            shape.push_back(it == sequence_length.end() || it->second < 0 ? -1 : (it->second + d.size - 1) / d.size);
        } else {
            shape.push_back(this->*count_of(d.role));
        }
    }
    return shape;
}

std::string RuntimeSizes::describe(const tensor_spec& spec) const {
    const std::vector<std::int64_t> shape = shape_of(spec);
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        s += i ? ", " : "";
        const dim_spec& d = spec.dims[i];
        if (d.role == dim_spec::axis::fixed)
            s += std::to_string(d.size);
        else
            s += d.own_symbol() + (shape[i] >= 0 ? "=" + std::to_string(shape[i]) : "") + (d.broadcast ? " or 1" : "");
    }
    return s + ")";
}

bool is_batched(const tensor_spec& spec) {
    return !spec.dims.empty() && spec.dims.front().role == dim_spec::axis::batch;
}

bool has_sequence_axis(const tensor_spec& spec) {
    return std::any_of(spec.dims.begin(), spec.dims.end(),
                       [](const dim_spec& d) { return d.role == dim_spec::axis::sequence; });
}

namespace {

std::string input_names(const graph_signature& sig) {
    std::string s;
    for (const auto& in : sig.inputs)
        s += (s.empty() ? "" : ", ") + in.name + in.shape_symbol() + (in.optional() ? " (optional)" : "");
    return s;
}

}  // namespace

// Sizes beyond int32 are rejected before anything is allocated or looped over: Halide indexes every
// dimension with 32-bit integers, and a declared size of 2^40 with another size 0 (an empty tensor)
// would otherwise send the interpreter through 2^40 empty iterations.
constexpr std::int64_t max_size = std::numeric_limits<std::int32_t>::max();

void check_head_group(const std::string& variant, const RuntimeSizes& sizes) {
    // Grouped-query attention at run time: query head h reads key/value head h / (H / Hkv).
    if (sizes.kv_heads < 0 || sizes.heads < 0) return;
    if (sizes.kv_heads == 0 ? sizes.heads != 0 : sizes.heads % sizes.kv_heads != 0)
        throw input_error(
            variant + ": the queries' head count H=" + std::to_string(sizes.heads) +
            " must be a multiple of the keys' and values' head count Hkv=" + std::to_string(sizes.kv_heads) +
            " (MHA: Hkv = H; GQA: H / Hkv query heads share each; MQA: Hkv = 1)");
}

RuntimeSizes check_shapes(const graph_signature& sig, const ShapeMap& given) {
    for (const auto& [name, shape] : given) {
        bool known = false;
        for (const auto& in : sig.inputs) known = known || in.name == name;
        if (!known) throw input_error(sig.name + ": unexpected input '" + name + "'; it takes " + input_names(sig));
    }
    RuntimeSizes sizes;
    // Blocks of tokens (B, H, ⌈L/T⌉, E) bound before their sequence's length: checked once every input is.
    std::vector<const tensor_spec*> blocks_before_length;
    for (const auto& spec : sig.inputs) {
        auto it = given.find(spec.name);
        if (it == given.end() && spec.optional()) continue;  // its default (default_input_values)
        if (it == given.end())
            throw input_error(sig.name + ": missing input '" + spec.name + "' of shape " + sizes.describe(spec) +
                              "; it takes " + input_names(sig));
        const std::vector<std::int64_t>& shape = it->second;
        const RuntimeSizes known_before = sizes;  // the message shows what was known before this input
        auto mismatch = [&] {
            return input_error(sig.name + ": input '" + spec.name + "' must have shape " + known_before.describe(spec) +
                               ", given " + shape_string(shape));
        };
        if (shape.size() != spec.dims.size()) throw mismatch();
        for (std::int64_t n : shape)
            if (n < 0 || n > max_size)
                throw input_error(
                    sig.name + ": input '" + spec.name + "' has shape " + shape_string(shape) +
                    "; every size must be " +
                    (n < 0 ? "non-negative" : "at most 2^31 - 1 (the largest extent a kernel can index)"));
        for (std::size_t i = 0; i < spec.dims.size(); ++i) {
            const dim_spec& d = spec.dims[i];
            const std::int64_t n = shape[i];
            if (d.role == dim_spec::axis::fixed) {
                if (n != d.size) throw mismatch();
                continue;
            }
            if (d.broadcast && n == 1) continue;  // repeated along the axis, whatever its size
            if (d.role == dim_spec::axis::head_width_groups) {
                // E/G groups of G channels: E, if not yet bound, is G per group.
                if (sizes.head_width >= 0 && sizes.head_width % d.size != 0)
                    throw input_error(sig.name + ": input '" + spec.name + "' holds a scale per group of " +
                                      std::to_string(d.size) +
                                      " channels, but the head width E=" + std::to_string(sizes.head_width) +
                                      " is not a multiple of " + std::to_string(d.size));
                if (sizes.head_width >= 0 && sizes.head_width / d.size != n) throw mismatch();
                if (sizes.head_width < 0) sizes.head_width = n * d.size;
                continue;
            }
            if (d.role == dim_spec::axis::sequence_blocks) {
                // ⌈L/T⌉ blocks of T tokens (the last one partial where T does not divide L).
                auto length = sizes.sequence_length.find(d.sequence);
                if (length == sizes.sequence_length.end() || length->second < 0)
                    blocks_before_length.push_back(&spec);
                else if (n != (length->second + d.size - 1) / d.size)
                    throw mismatch();
                continue;
            }
            std::int64_t* slot = d.role == dim_spec::axis::sequence
                                     ? &sizes.sequence_length.try_emplace(d.sequence, -1).first->second
                                     : &(sizes.*count_of(d.role));
            if (*slot >= 0 && *slot != n) throw mismatch();
            *slot = n;
        }
    }
    for (const tensor_spec* spec : blocks_before_length) {
        const std::vector<std::int64_t>& shape = given.at(spec->name);
        const std::vector<std::int64_t> expected = sizes.shape_of(*spec);
        for (std::size_t i = 0; i < spec->dims.size(); ++i)
            if (spec->dims[i].role == dim_spec::axis::sequence_blocks && expected[i] != shape[i])
                throw input_error(sig.name + ": input '" + spec->name + "' must have shape " + sizes.describe(*spec) +
                                  " (one row a block of " + std::to_string(spec->dims[i].size) + " tokens), given " +
                                  shape_string(shape));
    }
    check_head_group(sig.name, sizes);
    if (sizes.batch < 0) sizes.batch = 1;
    return sizes;
}

std::int32_t index_value(double v, const std::string& what, std::size_t at) {
    if (!(v == std::floor(v) && std::abs(v) <= 2147483647.0))
        throw input_error(what + " is an int32 index input, but holds " + std::to_string(v) + " at index " +
                          std::to_string(at));
    return static_cast<std::int32_t>(v);
}

std::vector<double> default_input_values(const graph_signature& sig, const tensor_spec& spec,
                                         const RuntimeSizes& sizes) {
    auto unknown = [&](const std::string& what) {
        return input_error(sig.name + ": input '" + spec.name + "' has no default here (its default, " + what +
                           ", needs that size of the call)");
    };
    switch (spec.when_missing) {
        case default_rule::inverse_sqrt_head_width: {
            const std::int64_t width = spec.default_scale_width > 0 ? spec.default_scale_width : sizes.head_width;
            if (width <= 0) throw unknown("1/sqrt(E)");
            return {1.0 / std::sqrt(static_cast<double>(width))};
        }
        case default_rule::constant:
            return {spec.default_value};
        case default_rule::alibi_slopes: {
            const dim_spec& d = spec.dims.front();
            const std::int64_t heads = d.role == dim_spec::axis::fixed ? d.size : sizes.heads;
            if (heads <= 0) throw unknown("2^(-8(h+1)/H)");
            std::vector<double> slopes(static_cast<std::size_t>(heads));
            for (std::int64_t h = 0; h < heads; ++h)
                slopes[static_cast<std::size_t>(h)] = std::exp2(-8.0 * static_cast<double>(h + 1) / double(heads));
            return slopes;
        }
        default:
            throw input_error(sig.name + ": input '" + spec.name + "' has no default here");
    }
}

bool default_needs_sizes(const tensor_spec& spec) {
    return spec.when_missing == default_rule::alibi_slopes;
}

void check_input_values(const graph_signature& sig, const tensor_spec& spec, const RuntimeSizes& sizes,
                        std::int64_t count, const std::function<double(std::int64_t)>& value) {
    if (spec.is_scale())
        for (std::int64_t i = 0; i < count; ++i)
            if (!std::isfinite(value(i)))
                throw input_error(sig.name + ": input '" + spec.name + "' (the scores' scale) holds " +
                                  std::to_string(value(i)) + "; a scale must be a finite number");
    if (spec.values_bounded_by.empty()) return;
    const auto it = sizes.sequence_length.find(spec.values_bounded_by);
    if (it == sizes.sequence_length.end()) return;
    const std::int64_t limit = it->second;
    for (std::int64_t i = 0; i < count; ++i) {
        const double v = value(i);
        if (!(v >= 0 && v <= static_cast<double>(limit)))
            throw input_error(sig.name + ": input '" + spec.name + "' holds " + std::to_string(static_cast<long long>(v)) +
                              " at index " + std::to_string(i) + "; a cache length must lie in [0, " +
                              std::to_string(limit) + "] (L[" + spec.values_bounded_by + "], the cache's size)");
    }
}

}  // namespace attnforge::dsl
