// Document masking for packed sequences: several documents share one sequence of the batch, and a
// token attends only to earlier tokens of its own document. The document id of every token is an
// input (B, L), as in FlexAttention's document_causal mask_mod. The causal mask is given as such, so
// kernels skip the key blocks above the diagonal; the documents' blocks are skipped at run time.
#pragma once

#include <attnforge/dsl/variants/common.hpp>

namespace attnforge::dsl::variants {

inline constexpr auto document_ids = sequence_indices<"document_ids", "tokens">();

inline constexpr auto document_attention = [] {
    constexpr auto q = heads_input<"q", 64, "tokens">();
    constexpr auto k = heads_input<"k", 64, "tokens">();
    constexpr auto v = heads_input<"v", 64, "tokens">();
    constexpr auto same_document = predicate(
        [](auto b, auto, auto q_idx, auto kv_idx) { return document_ids(b, q_idx) == document_ids(b, kv_idx); });
    return make_graph<"document_attention">(attention(q, k, v, causal, same_document));
}();

}  // namespace attnforge::dsl::variants
