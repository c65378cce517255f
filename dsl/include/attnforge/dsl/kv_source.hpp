// Where an attention's keys and values come from: a source is the rows of a (B, Hkv, Lk, E) tensor and
// which of them hold keys. The attention pattern (passes/attention_pattern.hpp) gives its K and V as
// sources; the lowering makes one accessor of each (codegen/lower/kv_source.hpp) that the score product,
// the decode product, P·V and the prefetch read, and the interpreter takes the valid rows from it.
//
//   dense_rows<Node>         the rows as the node computes them: an input read in place, or a computed
//                            tensor (a projection, RoPE): every K and V node but those below (rows_of).
//   quantized_rows<...>      a quantized cache's codes with their scales (nodes/dequantize.hpp, its rows_of).
//   every_row                no cache: all Lk rows hold keys.
//   a lengths input          a cache (kv_cache): the first lengths[b] rows of batch entry b hold keys.
//
// A new way of storing rows (codes with scales, a pool of pages with a block table) is the node one writes
// for it (its meaning, which the interpreter evaluates), beside it a rows type and a rows_of overload for the
// node (found by argument-dependent lookup: this file need not change), and its lowering (Lower::rows):
// docs/design.md, "Where K and V come from".
#pragma once

#include <attnforge/dsl/tags.hpp>

#include <type_traits>

namespace attnforge::dsl {

// The rows of a K or V node as the node itself computes them.
template <class Node>
struct dense_rows {
    using tag = kv_rows_tag;
    using kind = typename Node::kind;
    Node node;
};

// How an attention reads a K or V node: dense for every node kind there is.
template <class Node>
constexpr auto rows_of(const Node& node) {
    return dense_rows<Node>{node};
}

// No cache: every row holds a key.
struct every_row {};

template <class Rows, class Valid>
struct kv_source {
    using tag = kv_source_tag;
    using kind = typename Rows::kind;
    Rows rows;
    Valid valid;  // every_row, or the (B) int32 lengths input of a cache
    static constexpr bool cached = !std::is_same_v<Valid, every_row>;
};

template <class Node, class Valid>
constexpr auto kv_source_of(const Node& node, const Valid& valid) {
    using Rows = decltype(rows_of(node));
    return kv_source<Rows, Valid>{rows_of(node), valid};
}

}  // namespace attnforge::dsl
