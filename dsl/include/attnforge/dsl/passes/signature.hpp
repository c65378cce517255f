// signature: a graph's inputs and output as run-time data (names, dims, dtypes), for binding tensors,
// for error messages that name the input and both shapes, and for `attnforge list`.
#pragma once

#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/passes/collect_inputs.hpp>
#include <attnforge/dsl/passes/find_softmax.hpp>
#include <attnforge/element_types.hpp>

#include <boost/hana/for_each.hpp>

#include <optional>
#include <string>
#include <vector>

namespace attnforge::dsl {

// One axis of a tensor: the batch B, the length of a named sequence, a run-time head count H, the keys' and
// values' run-time head count Hkv (a divisor of H), a run-time head width E, the number E/G of groups of G channels
// in it (a quantized cache's group scales), the number ⌈L/T⌉ of blocks of T tokens of a sequence (a quantized
// cache's scales by channel), or a static size.
struct dim_spec {
    enum class axis { batch, sequence, heads, fixed, kv_heads, head_width, head_width_groups, sequence_blocks } role;
    std::string sequence;  // for role::sequence and role::sequence_blocks
    long long size = 0;    // for role::fixed; G for role::head_width_groups; T for role::sequence_blocks
    // The tensor may also have 1 there and is read as if repeated along the axis (PyTorch's broadcasting of a mask
    // over the batch and the heads): a size 1 binds nothing.
    bool broadcast = false;

    std::string symbol() const { return broadcast ? own_symbol() + " or 1" : own_symbol(); }
    std::string own_symbol() const {
        switch (role) {
            case axis::batch:
                return "B";
            case axis::sequence:
                return "L[" + sequence + "]";
            case axis::heads:
                return "H";
            case axis::kv_heads:
                return "Hkv";
            case axis::head_width:
                return "E";
            case axis::head_width_groups:
                return "E/" + std::to_string(size);
            case axis::sequence_blocks:
                return "L[" + sequence + "]/" + std::to_string(size);
            default:
                return std::to_string(size);
        }
    }
};

// A tensor's element type: the element-type table (attnforge/element_types.hpp).

struct tensor_spec {
    std::string name;
    std::vector<dim_spec> dims;
    element_type dtype = element_type::float32;
    // Cache lengths: every value must lie in [0, L[values_bounded_by]] (checked when inputs are bound).
    std::string values_bounded_by;
    // What the input is where a call leaves it out (default_input_values, bind_shapes.hpp): required, or optional by
    // a rule: a scale (scale_input()) 1/√E, E default_scale_width or, where it is 0, the call's run-time E; a number
    // given in the graph (default_value: a built-in's window, cap); ALiBi's slopes for the call's H.
    default_rule when_missing = default_rule::required;
    int default_scale_width = -1;
    double default_value = 0;
    // A quantized cache's scales or zero points (token_values, group_scales): what the input is to its codes.
    std::optional<quantization_role> quantization = std::nullopt;

    bool optional() const { return when_missing != default_rule::required; }
    // A parameter (a number: a scale, a window, a cap; one per head: ALiBi's slopes; a quantized cache's scales and
    // zero points, which define its values) rather than a stored tensor: in its own type (float32, int32) in every
    // kernel, 16-bit ones included, so that it is exact.
    bool is_parameter() const {
        return quantization || dims.empty() || (dims.size() == 1 && dims.front().role == dim_spec::axis::heads);
    }
    bool is_scale() const { return when_missing == default_rule::inverse_sqrt_head_width; }

    std::string shape_symbol() const {
        std::string s = "(";
        for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i].symbol();
        return s + ")";
    }
};

template <class Kind>
std::vector<dim_spec> dims_of_kind() {
    using R = dim_spec::axis;
    auto fixed = [](long long n) { return dim_spec{R::fixed, {}, n}; };
    auto seq = [](std::string_view name) { return dim_spec{R::sequence, std::string(name), 0}; };
    auto heads = [&](int h) {
        return h == runtime_heads      ? dim_spec{R::heads, {}, 0}
               : h == runtime_kv_heads ? dim_spec{R::kv_heads, {}, 0}
                                       : fixed(h);
    };
    std::vector<dim_spec> d;
    if constexpr (requires { Kind::batched; }) {
        if (Kind::batched) d.push_back({R::batch, {}, 0});
    }
    if constexpr (is_activation_v<Kind>) {
        d.insert(d.end(), {seq(Kind::seq.view()), fixed(Kind::width)});
    } else if constexpr (is_heads_v<Kind> || is_codes<Kind>::value) {
        const dim_spec width =
            Kind::head_width == runtime_head_width ? dim_spec{R::head_width, {}, 0} : fixed(Kind::head_width);
        d.insert(d.end(), {heads(Kind::heads), seq(Kind::seq.view()), width});
    } else if constexpr (is_token_values<Kind>::value) {
        d.insert(d.end(), {heads(Kind::heads), seq(Kind::seq.view())});
    } else if constexpr (is_group_scales<Kind>::value) {
        const dim_spec groups = Kind::head_width == runtime_head_width ? dim_spec{R::head_width_groups, {}, Kind::group}
                                                                       : fixed(Kind::head_width / Kind::group);
        d.insert(d.end(), {heads(Kind::heads), seq(Kind::seq.view()), groups});
    } else if constexpr (is_channel_values<Kind>::value) {
        const dim_spec width =
            Kind::head_width == runtime_head_width ? dim_spec{R::head_width, {}, 0} : fixed(Kind::head_width);
        d.insert(d.end(), {heads(Kind::heads), dim_spec{R::sequence_blocks, std::string(Kind::seq.view()),
                                                        Kind::token_block},
                           width});
    } else if constexpr (is_scores_v<Kind>) {
        d.insert(d.end(), {heads(Kind::heads), seq(Kind::seq_q.view()), seq(Kind::seq_k.view())});
    } else if constexpr (is_broadcast_mask<Kind>::value) {
        d.front().broadcast = true;  // B or 1
        d.insert(d.end(), {dim_spec{R::heads, {}, 0, true}, seq(Kind::seq_q.view()), seq(Kind::seq_k.view())});
    } else if constexpr (is_weight_v<Kind>) {
        d.insert(d.end(), {fixed(Kind::in_width), fixed(Kind::out_width)});
    } else if constexpr (is_weight_vector_v<Kind>) {
        d.push_back(fixed(Kind::width));
    } else if constexpr (is_head_values<Kind>::value) {
        d.push_back(heads(Kind::heads));
    } else if constexpr (is_key_padding<Kind>::value || is_sequence_values<Kind>::value) {
        if constexpr (is_key_padding<Kind>::value)
            d.push_back(seq(Kind::seq_k.view()));
        else
            d.push_back(seq(Kind::seq.view()));
    } else if constexpr (is_batch_values<Kind>::value || is_cache_lengths<Kind>::value || is_scalar<Kind>::value ||
                         is_scale<Kind>::value) {
        // (B) only, the batch axis above; a scalar none
    } else {
        static_assert(is_attention_mask<Kind>::value);
        d.insert(d.end(), {seq(Kind::seq_q.view()), seq(Kind::seq_k.view())});
    }
    return d;
}

template <class Kind>
constexpr element_type dtype_of_kind() {
    if constexpr (is_key_padding<Kind>::value || is_attention_mask<Kind>::value)
        return element_type::boolean;
    else if constexpr (is_broadcast_mask<Kind>::value)
        return Kind::additive ? element_type::float32 : element_type::boolean;
    else if constexpr (is_codes<Kind>::value)
        return Kind::code;
    else if constexpr (requires { Kind::integer; })
        return Kind::integer ? element_type::int32 : element_type::float32;
    else
        return element_type::float32;
}

// The spec's rule for a missing input, from the kind's (required where the kind has none).
template <class Kind>
void set_default_of_kind(tensor_spec& spec) {
    if constexpr (requires { Kind::when_missing; }) spec.when_missing = Kind::when_missing;
    if constexpr (is_scale<Kind>::value) spec.default_scale_width = Kind::width;
    if constexpr (requires { Kind::default_value; }) spec.default_value = Kind::default_value;
    if constexpr (is_token_values<Kind>::value || is_channel_values<Kind>::value) spec.quantization = Kind::role;
    if constexpr (is_group_scales<Kind>::value) spec.quantization = quantization_role::scale;
}

template <class Kind>
std::string values_bound_of_kind() {
    if constexpr (is_cache_lengths<Kind>::value)
        return std::string(Kind::seq.view());
    else
        return {};
}

struct graph_signature {
    std::string name;
    std::vector<tensor_spec> inputs;
    tensor_spec output;
};

template <fixed_string Name, class Output>
graph_signature signature(const graph<Name, Output>& g) {
    graph_signature sig{std::string(Name.view()), {}, {"output", dims_of_kind<typename Output::kind>()}};
    hana::for_each(collect_inputs(g), [&](auto in) {
        using In = decltype(in);
        tensor_spec spec{std::string(In::name.view()), dims_of_kind<typename In::kind>(),
                         dtype_of_kind<typename In::kind>(), values_bound_of_kind<typename In::kind>()};
        set_default_of_kind<typename In::kind>(spec);
        sig.inputs.push_back(std::move(spec));
    });
    return sig;
}

// The attention weights a graph can expose: its softmax labelled "attention", (B, Hq, Lq, Lk).
template <fixed_string Name, class Output>
constexpr bool has_attention_weights(const graph<Name, Output>& g) {
    return decltype(hana::is_just(find_softmax<"attention">(g)))::value;
}

template <fixed_string Name, class Output>
tensor_spec attention_weights_spec(const graph<Name, Output>& g) {
    auto found = find_softmax<"attention">(g);
    if constexpr (decltype(hana::is_just(found))::value) {
        using Kind = typename std::remove_cvref_t<decltype(found.value())>::kind;
        auto dims = dims_of_kind<Kind>();
        // Always (B, Hq, Lq, Lk) (docs/contract.md §3): an unbatched graph's weights have B = 1.
        if (dims.front().role != dim_spec::axis::batch) dims.insert(dims.begin(), {dim_spec::axis::fixed, {}, 1});
        return {"attention_weights", std::move(dims)};
    } else {
        return {"attention_weights", {}};  // none: no dims
    }
}

// The sequences an attention's weights (B, Hq, Lq, Lk) run over: the queries' and the keys' sequence names
// ("" where there are no weights, or that axis is not a sequence). A call's Lq and Lk are their lengths.
struct attention_sequences_t {
    std::string query, key;
};
inline attention_sequences_t attention_sequences(const tensor_spec& weights) {
    if (weights.dims.size() < 2) return {};
    const dim_spec &q = weights.dims[weights.dims.size() - 2], &k = weights.dims.back();
    return {q.role == dim_spec::axis::sequence ? q.sequence : "", k.role == dim_spec::axis::sequence ? k.sequence : ""};
}

// The log-sum-exp of the same softmax's rows, (B, Hq, Lq): log Σ_k exp(s_k), −∞ for fully masked rows.
template <fixed_string Name, class Output>
tensor_spec logsumexp_spec(const graph<Name, Output>& g) {
    tensor_spec spec = attention_weights_spec(g);
    spec.name = "logsumexp";
    if (!spec.dims.empty()) spec.dims.pop_back();
    return spec;
}

}  // namespace attnforge::dsl
