// The reference interpreter: evaluates any DSL graph on host tensors with float64 arithmetic. It is
// the spec every generated kernel is validated against (docs/contract.md §1, §5).
//
//     auto r = attnforge::interp::evaluate(attnforge::dsl::variants::mha, {{"x", x}, {"wq", wq}, ...});
//     r.output                                   // (B, L, 512)
//     r.intermediates.at("attention_weights")    // (B, Hq, Lq, Lk)
//     r.intermediates.at("attention_logsumexp")  // (B, Hq, Lq), -inf for fully masked rows
//     r.score_rounding.output                    // docs/contract.md §5's score-rounding term
//     evaluate(g, inputs, {.intermediates = false})  // output only
//
// One evaluate() overload per node kind; the nodes themselves know nothing of evaluation.
#pragma once

#include <attnforge/dsl.hpp>
#include <attnforge/interp/binding.hpp>
#include <attnforge/interp/ops.hpp>
#include <attnforge/interp/score_rounding.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace attnforge::interp {

struct Result {
    Tensor output;
    TensorMap intermediates;  // "<softmax label>_weights", "<softmax label>_logsumexp", when requested
    ScoreRounding score_rounding;
};

struct EvaluateOptions {
    // Keep every softmax's weights and logsumexp in Result::intermediates and work out
    // Result::score_rounding. Off saves their memory (B·Hq·Lq·Lk doubles per softmax) and time.
    bool intermediates = true;
    // Round what a bf16 kernel with bf16 products rounds besides its inputs (docs/storage_types.md): every
    // projection's input x and the heads split from a projection (Q, K, V), to bf16, to nearest even. The result is
    // then what such a kernel computes up to its float32 arithmetic and its rounding of P (the tests' tight check on
    // those kernels); not the contract's reference (§5 is against the interpreter on the inputs alone).
    bool round_projection_operands = false;
};

namespace detail {

namespace dsl = attnforge::dsl;
namespace ex = attnforge::dsl::ex;

struct Context {
    const BoundInputs& bound;
    TensorMap& intermediates;
    bool capture;
    ScoreRounding& score_rounding;
    double last_score_magnitude = 0;  // S and E of the score evaluated last (while capturing)
    std::int64_t last_head_width = 0;
    bool round_projection_operands = false;  // EvaluateOptions::round_projection_operands
};

// Expression backend: every value a double; booleans are 0 or 1.
struct DoubleBackend {
    const BoundInputs* bound;  // what reads (ex::read) read

    double constant(double v) const { return v; }

    // An input's value at row-major indices, each rounded down and clamped to its axis (±inf to the
    // ends; a NaN index reads 0), exactly as kernels do (codegen/lower/expressions.hpp).
    template <class In, class... V>
    double read(In, V... index) const {
        const Tensor& t = bound->tensors.find(In::name.view())->second;
        const std::array<double, sizeof...(V)> given{static_cast<double>(index)...};
        const std::size_t leading = static_cast<std::size_t>(t.rank()) - given.size();  // an unbatched input's B = 1
        std::int64_t flat = 0;
        for (std::size_t r = 0; r < static_cast<std::size_t>(t.rank()); ++r) {
            const std::int64_t extent = t.shape[r];
            std::int64_t i = 0;
            if (r >= leading) {
                const double x = std::floor(given[r - leading]);
                i = std::isnan(x) ? 0 : static_cast<std::int64_t>(std::clamp(x, 0.0, double(extent - 1)));
            }
            flat = flat * extent + i;
        }
        return t.data[static_cast<std::size_t>(flat)];
    }

    template <class Op, class... A>
    double call(Op, A... a) const {
        const double x[] = {a...};
        using namespace ex::op;
        if constexpr (std::is_same_v<Op, add>)
            return x[0] + x[1];
        else if constexpr (std::is_same_v<Op, sub>)
            return x[0] - x[1];
        else if constexpr (std::is_same_v<Op, mul>)
            return x[0] * x[1];
        else if constexpr (std::is_same_v<Op, div>)
            return x[0] / x[1];
        else if constexpr (std::is_same_v<Op, neg>)
            return -x[0];
        else if constexpr (std::is_same_v<Op, lt>)
            return x[0] < x[1];
        else if constexpr (std::is_same_v<Op, le>)
            return x[0] <= x[1];
        else if constexpr (std::is_same_v<Op, gt>)
            return x[0] > x[1];
        else if constexpr (std::is_same_v<Op, ge>)
            return x[0] >= x[1];
        else if constexpr (std::is_same_v<Op, eq>)
            return x[0] == x[1];
        else if constexpr (std::is_same_v<Op, ne>)
            return x[0] != x[1];
        else if constexpr (std::is_same_v<Op, logical_and>)
            return x[0] != 0 && x[1] != 0;
        else if constexpr (std::is_same_v<Op, logical_or>)
            return x[0] != 0 || x[1] != 0;
        else if constexpr (std::is_same_v<Op, logical_not>)
            return x[0] == 0;
        else if constexpr (std::is_same_v<Op, ex::op::abs>)
            return std::abs(x[0]);
        else if constexpr (std::is_same_v<Op, ex::op::min>)
            return std::min(x[0], x[1]);
        else if constexpr (std::is_same_v<Op, ex::op::max>)
            return std::max(x[0], x[1]);
        else if constexpr (std::is_same_v<Op, ex::op::tanh>)
            return std::tanh(x[0]);
        else if constexpr (std::is_same_v<Op, ex::op::exp>)
            return std::exp(x[0]);
        else if constexpr (std::is_same_v<Op, ex::op::exp2>)
            return std::exp2(x[0]);
        else if constexpr (std::is_same_v<Op, ex::op::log>)
            return std::log(x[0]);
        else if constexpr (std::is_same_v<Op, ex::op::floor>)
            return std::floor(x[0]);
        else if constexpr (std::is_same_v<Op, ex::op::select>)
            return x[0] != 0 ? x[1] : x[2];
        else
            static_assert(sizeof(Op) == 0, "DoubleBackend: an expression operation has no evaluation here");
    }
};

struct Env {
    double score, b, h, q_idx, kv_idx;
};

template <dsl::fixed_string Name, class K>
Tensor evaluate(const dsl::input_node<Name, K>&, Context& ctx) {
    return ctx.bound.tensors.find(Name.view())->second;
}

template <class X, class W, class Bias>
Tensor evaluate(const dsl::linear_node<X, W, Bias>& n, Context& ctx) {
    Tensor x = evaluate(n.x, ctx);
    if (ctx.round_projection_operands) ops::round_to_bf16(x);
    const Tensor w = evaluate(n.w, ctx);
    if constexpr (dsl::linear_node<X, W, Bias>::has_bias) {
        const Tensor bias = evaluate(n.bias, ctx);
        return ops::linear(x, w, &bias);
    } else {
        return ops::linear(x, w, nullptr);
    }
}

template <class X, int H>
Tensor evaluate(const dsl::split_heads_node<X, H>& n, Context& ctx) {
    Tensor heads = ops::split_heads(evaluate(n.x, ctx), H);
    if (dsl::is_a<X, dsl::linear_tag> && ctx.round_projection_operands) ops::round_to_bf16(heads);
    return heads;
}

template <class X>
Tensor evaluate(const dsl::merge_heads_node<X>& n, Context& ctx) {
    return ops::merge_heads(evaluate(n.x, ctx));
}

template <class Q, class K, class S>
Tensor evaluate(const dsl::score_node<Q, K, S>& n, Context& ctx) {
    const Tensor q = evaluate(n.q, ctx), k = evaluate(n.k, ctx);
    // A scale input's value (the binding gave it 1/√E where the call gave none), else the graph's.
    double scale = 0;
    if constexpr (dsl::score_node<Q, K, S>::runtime_scale)
        scale = evaluate(n.scale_input, ctx).data.at(0);
    else
        scale = n.effective_scale(double(q.dim(3)));
    if (ctx.capture) {
        ctx.last_score_magnitude = ops::largest_score_magnitude(q, k, scale);
        ctx.last_head_width = q.dim(3);
    }
    return ops::scores(q, k, scale);
}

// Where the queries of an attention sit: query i of batch entry b at position i + offset[b]. Without
// a kv_cache every offset is 0; with one, offset[b] = lengths[b] − Lq (docs/contract.md §1). Every
// layer sees the position as q_idx.
struct QueryPositions {
    std::vector<std::int64_t> offset;  // per batch entry; empty: 0
    std::int64_t of(std::int64_t b, std::int64_t i) const {
        return offset.empty() ? i : i + offset[static_cast<std::size_t>(b)];
    }
};

// One mask layer over scores (B, H, Lq, Lk): the pairs it removes become -inf.
template <class Spec>
void apply_layer(const dsl::mask_layer<Spec>& layer, Tensor& s, const QueryPositions& pos, Context& ctx) {
    using i64 = std::int64_t;
    if constexpr (dsl::is_a<Spec, dsl::causal_spec_tag>) {
        ops::mask_where(s, [&](i64 b, i64, i64 i, i64 j) { return j <= pos.of(b, i); });
    } else if constexpr (dsl::is_predicate_spec<Spec>) {
        ops::mask_where(s, [&](i64 b, i64 h, i64 i, i64 j) {
            const Env env{0.0, double(b), double(h), double(pos.of(b, i)), double(j)};
            return ex::evaluate(layer.spec.expr, env, DoubleBackend{&ctx.bound}) != 0.0;
        });
    } else if constexpr (dsl::is_a<Spec, dsl::key_padding_spec_tag>) {
        ops::mask_key_padding(s, evaluate(layer.spec.mask, ctx));
    } else if constexpr (dsl::is_a<Spec, dsl::kv_cache_spec_tag>) {
        const Tensor lengths = evaluate(layer.spec.lengths, ctx);
        ops::mask_where(s, [&](i64 b, i64, i64, i64 j) { return double(j) < lengths.data[static_cast<std::size_t>(b)]; });
    } else if constexpr (dsl::is_a<Spec, dsl::additive_mask_spec_tag>) {
        ops::add_broadcast_mask(s, evaluate(layer.spec.mask, ctx));
    } else {
        static_assert(dsl::is_a<Spec, dsl::boolean_mask_spec_tag>, "attnforge interpreter: unknown mask spec");
        if constexpr (dsl::is_broadcast_mask<typename decltype(layer.spec.mask)::kind>::value)
            ops::mask_broadcast(s, evaluate(layer.spec.mask, ctx));
        else
            ops::mask_boolean(s, evaluate(layer.spec.mask, ctx));
    }
}

// One score modifier: f(score, b, h, q position, kv_idx) on every score that is not -inf.
template <class E>
void apply_layer(const dsl::modify_layer<E>& layer, Tensor& s, const QueryPositions& pos, Context& ctx) {
    ops::modify(s, [&](double score, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
        const Env env{score, double(b), double(h), double(pos.of(b, i)), double(j)};
        return ex::evaluate(layer.expr, env, DoubleBackend{&ctx.bound});
    });
}

// Raw scores as a result (no softmax above them): the layer on the scores below, queries at their index.
template <class S, class Spec>
Tensor evaluate(const dsl::mask_node<S, Spec>& n, Context& ctx) {
    Tensor s = evaluate(n.scores, ctx);
    apply_layer(dsl::mask_layer<Spec>{n.spec}, s, QueryPositions{}, ctx);
    return s;
}

template <class S, class E>
Tensor evaluate(const dsl::modify_node<S, E>& n, Context& ctx) {
    Tensor s = evaluate(n.scores, ctx);
    apply_layer(dsl::modify_layer<E>{n.expr}, s, QueryPositions{}, ctx);
    return s;
}

// The scores an attention pattern hands to its softmax: the product, then every layer in order, at
// the pattern's query positions (the queries of a cache sit at its end: its key source's valid rows).
// Dense rows are their node's values: the product evaluates K itself.
template <class Pattern>
Tensor attention_scores(const Pattern& p, Context& ctx) {
    Tensor s = evaluate(p.score, ctx);
    QueryPositions pos;
    using KeySource = decltype(p.key_source());
    if constexpr (KeySource::cached) {
        const Tensor lengths = evaluate(p.key_source().valid, ctx);
        const std::int64_t Lq = s.shape[2];
        for (double len : lengths.data) pos.offset.push_back(static_cast<std::int64_t>(len) - Lq);
    }
    boost::hana::for_each(p.layers, [&](const auto& layer) { apply_layer(layer, s, pos, ctx); });
    return s;
}

template <class S, dsl::fixed_string Label>
Tensor evaluate(const dsl::softmax_node<S, Label>& n, Context& ctx) {
    ops::SoftmaxResult r = ops::softmax(attention_scores(dsl::match_attention(n), ctx));
    if (ctx.capture) {
        const std::string label(Label.view());
        ctx.intermediates.insert_or_assign(label + "_logsumexp", std::move(r.logsumexp));
        ctx.intermediates.insert_or_assign(label + "_weights", r.weights);
    }
    return std::move(r.weights);
}

template <class P, class V>
Tensor evaluate(const dsl::weighted_sum_node<P, V>& n, Context& ctx) {
    const Tensor p = evaluate(n.probabilities, ctx);
    const double rounding = 2.0 * std::sqrt(double(ctx.last_head_width)) * 0x1p-24 * ctx.last_score_magnitude;
    const Tensor v = evaluate(n.v, ctx);
    if (ctx.capture) {
        ctx.score_rounding.output = std::max(ctx.score_rounding.output, rounding * ops::largest_magnitude(v));
        ctx.score_rounding.attention_weights = std::max(ctx.score_rounding.attention_weights, rounding);
        ctx.score_rounding.largest_score_magnitude =
            std::max(ctx.score_rounding.largest_score_magnitude, ctx.last_score_magnitude);
        ctx.score_rounding.attentions.push_back({ctx.last_score_magnitude, ops::largest_magnitude(v)});
    }
    return ops::weighted_sum(p, v);
}

template <class X, class G, class Bt>
Tensor evaluate(const dsl::layer_norm_node<X, G, Bt>& n, Context& ctx) {
    return ops::layer_norm(evaluate(n.x, ctx), evaluate(n.gamma, ctx), evaluate(n.beta, ctx), n.eps);
}

template <class A, class B>
Tensor evaluate(const dsl::add_node<A, B>& n, Context& ctx) {
    return ops::add(evaluate(n.a, ctx), evaluate(n.b, ctx));
}

template <class X>
Tensor evaluate(const dsl::positional_encoding_node<X>& n, Context& ctx) {
    return ops::positional_encoding(evaluate(n.x, ctx));
}

template <class X, class P>
Tensor evaluate(const dsl::rope_node<X, P>& n, Context& ctx) {
    const Tensor x = evaluate(n.x, ctx);
    std::vector<std::int64_t> offsets;
    if constexpr (dsl::rope_node<X, P>::at_cache_positions)
        for (double len : evaluate(n.lengths, ctx).data) offsets.push_back(static_cast<std::int64_t>(len) - x.dim(2));
    return ops::rope(x, n.base, offsets);
}

// A quantized cache's values, element-wise in float64: (u − zero) · scale per (b, h, token) or per (b, h, block of
// T tokens, channel) (scales and zeros (B, H, ⌈L/T⌉, E)), or, symmetric, c · scale with a scale per token or per
// group of G channels (scales (B, H, L, E/G)).
template <class C, class S, class Z>
Tensor evaluate(const dsl::dequantize_node<C, S, Z>& n, Context& ctx) {
    using Node = dsl::dequantize_node<C, S, Z>;
    Tensor x = evaluate(n.codes, ctx);
    const Tensor scale = evaluate(n.scale, ctx);
    const std::size_t E = static_cast<std::size_t>(x.shape.back());
    if constexpr (Node::by_channel) {  // scales and zeros (B, H, ⌈L/T⌉, E): token l reads block l / T
        const Tensor zero = evaluate(n.zero, ctx);
        const std::size_t L = static_cast<std::size_t>(x.dim(2)), T = static_cast<std::size_t>(Node::token_block),
                          blocks = static_cast<std::size_t>(scale.dim(2));
        for (std::size_t i = 0; i < x.data.size(); ++i) {
            const std::size_t row = i / E, slice = row / L, token = row % L;
            const std::size_t at = (slice * blocks + token / T) * E + i % E;
            x.data[i] = (x.data[i] - zero.data[at]) * scale.data[at];
        }
    } else if constexpr (Node::grouped) {  // scales (B, H, L, E/G)
        const std::size_t G = static_cast<std::size_t>(Node::group), groups = E / G;
        for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] *= scale.data[(i / E) * groups + (i % E) / G];
    } else if constexpr (Node::symmetric) {
        for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] *= scale.data[i / E];
    } else {
        const Tensor zero = evaluate(n.zero, ctx);
        for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = (x.data[i] - zero.data[i / E]) * scale.data[i / E];
    }
    return x;
}

// The output of an unbatched graph loses its batch axis of 1.
inline void drop_batch_axis(Tensor& t) {
    t.shape.erase(t.shape.begin());
}

}  // namespace detail

// Evaluates `g` on `inputs` (by name). Throws attnforge::input_error for missing, extra or misshapen
// inputs, naming the input and both shapes.
template <dsl::fixed_string Name, class Output>
Result evaluate(const dsl::graph<Name, Output>& g, const TensorMap& inputs, const EvaluateOptions& options = {}) {
    const dsl::graph_signature sig = dsl::signature(g);
    const BoundInputs bound = bind_inputs(sig, inputs);
    Result result;
    detail::Context ctx{bound, result.intermediates, options.intermediates, result.score_rounding};
    ctx.round_projection_operands = options.round_projection_operands;
    result.output = detail::evaluate(g.output, ctx);
    if (sig.output.dims.empty() || sig.output.dims.front().role != dsl::dim_spec::axis::batch) {
        detail::drop_batch_axis(result.output);  // intermediates keep B = 1: weights are (B, Hq, Lq, Lk) always
    }
    return result;
}

}  // namespace attnforge::interp
