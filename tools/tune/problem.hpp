// What attnforge tune tunes: a variant's result at given sizes, with everything derived from them
// (inputs' shapes, the result's shape, the dense flop count, the size bucket of its records).
#pragma once

#include <attnforge/catalogue/schedule_point.hpp>
#include <attnforge/catalogue/tuning_records.hpp>
#include <attnforge/dsl/passes/signature.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <cstdint>
#include <string>

namespace attnforge::tune {

using catalogue::ProblemSizes;  // B, H, Lq, Lk, as records keep them
using catalogue::SchedulePoint;

struct Problem {
    std::string variant;
    std::string result = "output";             // or attention_weights
    std::string storage = "float32";           // the kernel's storage type: float32 | bf16 | fp16
    int head_width = 0;                        // E where the variant's is run-time (the generator's head_width)
    ProblemSizes asked;                        // as given on the command line
    attnforge::testing::SyntheticSizes sizes;  // per sequence tag
    std::int64_t key_length = 0;               // Lk of the attention: what size classes test
    bool self_attention = false;               // queries and keys are one sequence (Lq = Lk)
    bool projections = false;                  // the graph has linear layers (weight inputs (D_in, D_out))
    dsl::graph_signature signature;
    dsl::tensor_spec result_spec;
    std::string canonical;  // dsl::canonical of the variant's graph
    double flops = 0;       // dense (dsl::flop_count)

    std::vector<std::int64_t> result_shape() const { return attnforge::testing::shape_for(result_spec, sizes); }
    std::string describe() const;  // "B=1 H=8 Lq=2048 Lk=2048"
};

// Throws attnforge::input_error for an unknown variant or a result it does not have. Lq and Lk are
// the attention's query and key lengths; a variant whose queries and keys share one sequence
// (self-attention) needs lq == lk.
Problem make_problem(const std::string& variant, const std::string& result, const ProblemSizes& sizes,
                     const std::string& storage = "float32");

// The small problem every candidate is validated on before it is timed: the bucket's smallest key
// length (the tuned kernel serves the whole bucket), short odd query blocks, two batch entries, two
// heads, so that partial tiles, batch and head indexing are all exercised.
Problem validation_problem(const Problem& p);

}  // namespace attnforge::tune
