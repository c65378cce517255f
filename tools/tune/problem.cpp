#include "problem.hpp"

#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/dsl.hpp>
#include <attnforge/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace attnforge::tune {

namespace {

bool has_axis(const dsl::graph_signature& sig, dsl::dim_spec::axis axis) {
    for (const auto& in : sig.inputs)
        for (const auto& d : in.dims)
            if (d.role == axis) return true;
    return false;
}

}  // namespace

std::string Problem::describe() const {
    std::string s = fmt::format("B={}", sizes.batch);
    if (has_axis(signature, dsl::dim_spec::axis::heads)) s += fmt::format(" H={}", sizes.heads);
    if (head_width) s += fmt::format(" E={}", head_width);
    return s + fmt::format(" Lq={} Lk={}", asked.lq, asked.lk);
}

Problem make_problem(const std::string& variant, const std::string& result, const ProblemSizes& asked,
                     const std::string& storage) {
    if (result != "output" && result != "attention_weights")
        throw input_error("result must be output or attention_weights, not '" + result + "'");
    if (storage != "float32" && storage != "bf16" && storage != "fp16")
        throw input_error("dtype must be float32, bf16 or fp16, not '" + storage + "'");
    Problem p;
    p.variant = variant;
    p.result = result;
    p.storage = storage;
    p.asked = asked;
    p.key_length = asked.lk;
    p.sizes = {asked.batch, asked.heads, {}, 0, asked.head_width};
    std::string seq_q, seq_k;
    if (!dsl::with_builtin_variant(variant, [&](const auto& g) {
            p.signature = dsl::signature(g);
            p.canonical = dsl::canonical(g);
            const dsl::tensor_spec w = dsl::attention_weights_spec(g);
            const dsl::attention_sequences_t sequences = dsl::attention_sequences(w);
            seq_q = sequences.query;
            seq_k = sequences.key;
            if (result == "attention_weights") {
                if (!dsl::has_attention_weights(g))
                    throw input_error("variant '" + variant + "' has no softmax labelled 'attention'");
                p.result_spec = w;
            } else {
                p.result_spec = p.signature.output;
            }
            p.self_attention = seq_q == seq_k;
            if (p.self_attention && asked.lq != asked.lk)
                throw input_error(
                    fmt::format("variant '{}' attends a sequence to itself: Lq and Lk must be equal (given {} and {})",
                                variant, asked.lq, asked.lk));
            for (const auto& in : p.signature.inputs)
                if (in.dims.size() == 2 && in.dims[0].role == dsl::dim_spec::axis::fixed &&
                    in.dims[1].role == dsl::dim_spec::axis::fixed)
                    p.projections = true;
            for (const auto& in : p.signature.inputs)
                for (const auto& d : in.dims)
                    if (d.role == dsl::dim_spec::axis::sequence)
                        p.sizes.length[d.sequence] = d.sequence == seq_k ? asked.lk : asked.lq;
            if (has_axis(p.signature, dsl::dim_spec::axis::head_width))
                p.head_width = static_cast<int>(asked.head_width);
            p.flops = dsl::flop_count(g, {double(asked.batch), double(asked.heads),
                                          [&](std::string_view s) { return double(p.sizes.length.at(std::string(s))); },
                                          double(asked.head_width)});
        }))
        throw input_error("unknown variant '" + variant + "' (see attnforge list)");
    return p;
}

Problem validation_problem(const Problem& p) {
    ProblemSizes s;
    s.batch = 2;
    s.heads = 2;
    s.head_width = p.asked.head_width;
    const std::int64_t low = catalogue::bucket_low(p.key_length);
    s.lk = low > 1 ? low : std::min<std::int64_t>(p.key_length, 37);
    s.lq = p.self_attention ? s.lk : std::min<std::int64_t>(p.asked.lq, 37);
    return make_problem(p.variant, p.result, s, p.storage);
}

}  // namespace attnforge::tune
