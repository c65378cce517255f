// ScoreRounding: what docs/contract.md §5's terms are computed from, as the interpreter finds them (interpreter.hpp
// fills it while keeping intermediates).
#pragma once

#include <vector>

namespace attnforge::interp {

// docs/contract.md §5's second term, 2·√E·2⁻²⁴·S·V: how far rounding the scores to float32 alone can
// move a result, the largest over the graph's attentions (S the largest scale·Σₑ|qₑ·kₑ|, V = max |v|
// for the output, 1 for the attention weights). Kept with the intermediates.
struct ScoreRounding {
    double largest_score_magnitude = 0;  // S
    double output = 0;
    double attention_weights = 0;
    // Each attention's S and V (max |v|), for §5's term for a 16-bit kernel's rounded operands
    // (testing::rounded_operands_term).
    struct Operands {
        double score_magnitude, value_magnitude;
    };
    std::vector<Operands> attentions;
};

}  // namespace attnforge::interp
