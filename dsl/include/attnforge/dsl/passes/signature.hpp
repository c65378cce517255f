// signature: a graph's inputs and output as run-time data (names, dims, dtypes), for binding tensors,
// for error messages that name the input and both shapes, and for `attnforge list`.
#pragma once

#include <attnforge/element_types.hpp>
#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/passes/collect_inputs.hpp>
#include <attnforge/dsl/passes/find_softmax.hpp>

#include <boost/hana/for_each.hpp>

#include <string>
#include <vector>

namespace attnforge::dsl {

// One axis of a tensor: the batch B, the length of a named sequence, a run-time head count H, the keys' and
// values' run-time head count Hkv (a divisor of H), a run-time head width E, or a static size.
struct dim_spec {
    enum class axis { batch, sequence, heads, fixed, kv_heads, head_width } role;
    std::string sequence;  // for role::sequence
    long long size = 0;    // for role::fixed

    std::string symbol() const {
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
    // A scale (scale_input()): optional, 1/√E where not given, E this width or, where it is 0, the call's run-time E;
    // float32 in every kernel. -1: not a scale (every other input is required).
    int default_scale_width = -1;

    bool optional() const { return default_scale_width >= 0; }

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
    } else if constexpr (is_heads_v<Kind>) {
        const dim_spec width =
            Kind::head_width == runtime_head_width ? dim_spec{R::head_width, {}, 0} : fixed(Kind::head_width);
        d.insert(d.end(), {heads(Kind::heads), seq(Kind::seq.view()), width});
    } else if constexpr (is_scores_v<Kind>) {
        d.insert(d.end(), {heads(Kind::heads), seq(Kind::seq_q.view()), seq(Kind::seq_k.view())});
    } else if constexpr (is_weight_v<Kind>) {
        d.insert(d.end(), {fixed(Kind::in_width), fixed(Kind::out_width)});
    } else if constexpr (is_weight_vector_v<Kind>) {
        d.push_back(fixed(Kind::width));
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
    else if constexpr (requires { Kind::integer; })
        return Kind::integer ? element_type::int32 : element_type::float32;
    else
        return element_type::float32;
}

template <class Kind>
int default_scale_width_of_kind() {
    if constexpr (is_scale<Kind>::value)
        return Kind::width;
    else
        return -1;
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
    graph_signature sig{
        std::string(Name.view()), {}, {"output", dims_of_kind<typename Output::kind>(), element_type::float32, {}, -1}};
    hana::for_each(collect_inputs(g), [&](auto in) {
        using In = decltype(in);
        sig.inputs.push_back({std::string(In::name.view()), dims_of_kind<typename In::kind>(),
                              dtype_of_kind<typename In::kind>(), values_bound_of_kind<typename In::kind>(),
                              default_scale_width_of_kind<typename In::kind>()});
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
        return {"attention_weights", std::move(dims), element_type::float32, {}, -1};
    } else {
        return {"attention_weights", {}, element_type::float32, {}, -1};  // none: no dims
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
