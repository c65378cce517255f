// attnforge DSL: what users include. Header-only; depends on Boost.Hana only.
//
// Entry points (all in namespace attnforge::dsl):
//   inputs      activation<"x", D>()  unbatched_activation<"x", D>()  heads_input<"q", E, Seq, H>()
//               weight<"w", Din, Dout>()  weight_vector<"gamma", D>()
//               key_padding_mask<"m", SeqK>()  attention_mask<"m", SeqQ, SeqK>()
//               sequence_values<"doc_ids", Seq>()  batch_values<"prefix_length">()
//   nodes       linear(x, w[, bias])  split_heads<H>(x)  merge_heads(x)  score(q, k[, scale])
//               mask(s, causal | key_padding(m) | boolean_mask(m) | predicate(fn) | sliding_window(n))
//               modify(s, fn | alibi<H>() | soft_cap(c))  softmax<"label">(s)  weighted_sum(p, v)
//               layer_norm(x, gamma, beta[, eps])  add(a, b)  positional_encoding(x)  rope(heads[, base])
//               dequantize(codes, scale, zero): a quantized cache (quantized_codes<"k", E>()  token_values<...>())
//   reads       in a predicate or modifier, any input at indices: doc_ids(b, q_idx), bias(h, i)
//               (sequence_values<"ids", Seq>()  batch_values<"n">()  weight<...>() are what they read)
//   composites  attention(q, k, v, masks...)  multi_head_attention<Hq, Hkv>(xq, xkv, wq, wk, wv, wo, masks...)
//   graphs      make_graph<"name">(output)  collect_inputs(g)  signature(g)  match_attention(softmax or weighted_sum)
//               pattern.key_source(), value_source(): where K and V come from (kv_source.hpp)
//   built-ins   variants::sdpa, variants::mha, ...  builtin_variants (one hana::tuple of all)
#pragma once

#include <attnforge/dsl/attention.hpp>
#include <attnforge/dsl/expr.hpp>
#include <attnforge/dsl/graph.hpp>
#include <attnforge/dsl/kv_source.hpp>
#include <attnforge/dsl/nodes/add.hpp>
#include <attnforge/dsl/nodes/dequantize.hpp>
#include <attnforge/dsl/nodes/heads.hpp>
#include <attnforge/dsl/nodes/input.hpp>
#include <attnforge/dsl/nodes/layer_norm.hpp>
#include <attnforge/dsl/nodes/linear.hpp>
#include <attnforge/dsl/nodes/mask.hpp>
#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/nodes/positional_encoding.hpp>
#include <attnforge/dsl/nodes/rope.hpp>
#include <attnforge/dsl/nodes/score.hpp>
#include <attnforge/dsl/nodes/softmax.hpp>
#include <attnforge/dsl/nodes/weighted_sum.hpp>
#include <attnforge/dsl/passes/attention_pattern.hpp>
#include <attnforge/dsl/passes/canonical.hpp>
#include <attnforge/dsl/passes/collect_inputs.hpp>
#include <attnforge/dsl/passes/find_softmax.hpp>
#include <attnforge/dsl/passes/flop_count.hpp>
#include <attnforge/dsl/passes/signature.hpp>
#include <attnforge/dsl/variants.hpp>
