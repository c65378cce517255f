// Node tags: every node type names what it is with `using tag = ..._tag;`, as Hana's data types carry
// their tag. Passes and back ends dispatch on the tag (`is_a<Node, score_tag>`), never on which members
// a node happens to have, so that a new node kind with a member called `q` or `expr` cannot be taken
// for another. Mask specifications carry tags of their own.
#pragma once

#include <type_traits>

namespace attnforge::dsl {

// Nodes
struct input_tag {};
struct linear_tag {};
struct split_heads_tag {};
struct merge_heads_tag {};
struct score_tag {};
struct mask_tag {};
struct modify_tag {};
struct softmax_tag {};
struct weighted_sum_tag {};
struct layer_norm_tag {};
struct add_tag {};
struct positional_encoding_tag {};
struct rope_tag {};
struct dequantize_tag {};
struct error_tag {};  // what a factory returns after a failed shape rule (diagnostics.hpp)

// Where an attention reads K and V from (kv_source.hpp)
struct kv_rows_tag {};    // how the rows of a K or V tensor are stored
struct kv_source_tag {};  // rows, and which of them hold keys

// Mask specifications (mask(s, spec))
struct causal_spec_tag {};          // query i sees keys j <= i
struct key_padding_spec_tag {};     // a (B, Lk) bool input, true = padded
struct boolean_mask_spec_tag {};    // a (B, Lq, Lk) or (B|1, H|1, Lq, Lk) bool input, true = takes part
struct additive_mask_spec_tag {};   // a (B|1, H|1, Lq, Lk) float input added to the scores, −∞ = removed
struct predicate_spec_tag {};       // an expression of (b, h, q_idx, kv_idx)
struct sliding_window_spec_tag {};  // a predicate whose band of keys bounds the loops (a window known or an input)
struct kv_cache_spec_tag {};        // a (B) int32 input of valid cache lengths: keys past them, query positions

template <class T>
using tag_of = typename std::remove_cvref_t<T>::tag;

template <class T, class = void>
struct has_tag : std::false_type {};
template <class T>
struct has_tag<T, std::void_t<typename std::remove_cvref_t<T>::tag>> : std::true_type {};

// is_a<T, Tag>: T is a node (or mask spec) of that tag; false for anything without a tag.
template <class T, class Tag>
constexpr bool is_a_impl() {
    if constexpr (has_tag<T>::value)
        return std::is_same_v<tag_of<T>, Tag>;
    else
        return false;
}
template <class T, class Tag>
inline constexpr bool is_a = is_a_impl<T, Tag>();

// Predicates (sliding windows included) carry an expression the back ends evaluate.
template <class Spec>
inline constexpr bool is_predicate_spec = is_a<Spec, predicate_spec_tag> || is_a<Spec, sliding_window_spec_tag>;

}  // namespace attnforge::dsl
