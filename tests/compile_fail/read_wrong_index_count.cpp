// A predicate reads document ids (B, L) with one index instead of two (the batch index is missing).
#include <attnforge/dsl.hpp>
using namespace attnforge::dsl;
constexpr auto ids = sequence_values<"document_ids", "q">();
constexpr auto g = attention(variants::sdpa_q, variants::sdpa_k, variants::sdpa_v,
                             predicate([](auto, auto, auto q_idx, auto kv_idx) { return ids(q_idx) == ids(kv_idx); }));
