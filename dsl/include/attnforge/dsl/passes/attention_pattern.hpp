// match_attention(node): the attention pattern weighted_sum(softmax(layers(score(q, k))), v), or a
// softmax alone (its probabilities are the result), as one typed value that back ends lower in one
// place: the score product, the mask and modifier layers in the order they apply, the values, the
// softmax's label, and what is known of the masks when generating (the key band).
//
// Every softmax of a valid graph matches: softmax takes raw scores, and scores are made only by score,
// mask and modify (nodes/softmax.hpp, nodes/weighted_sum.hpp check it with a diagnostic).
#pragma once

#include <attnforge/dsl/kv_source.hpp>
#include <attnforge/dsl/nodes/mask.hpp>
#include <attnforge/dsl/nodes/modify.hpp>
#include <attnforge/dsl/nodes/rope.hpp>
#include <attnforge/dsl/nodes/score.hpp>
#include <attnforge/dsl/nodes/softmax.hpp>
#include <attnforge/dsl/nodes/weighted_sum.hpp>

#include <boost/hana/append.hpp>
#include <boost/hana/count_if.hpp>
#include <boost/hana/find_if.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include <algorithm>
#include <string_view>
#include <type_traits>

namespace attnforge::dsl {

// One layer between the score product and the softmax.
template <class Spec>
struct mask_layer {
    Spec spec;
};
template <class Expr>
struct modify_layer {
    Expr expr;
};

template <class T>
struct is_mask_layer : std::false_type {};
template <class S>
struct is_mask_layer<mask_layer<S>> : std::true_type {};
// A layer that only removes pairs: a mask other than an additive one (which also moves the scores it keeps).
template <class T>
struct only_removes : std::false_type {};
template <class S>
struct only_removes<mask_layer<S>> : std::bool_constant<!is_a<S, additive_mask_spec_tag>> {};
template <class Layers>
struct all_mask_layers;
template <class... Ls>
struct all_mask_layers<hana::tuple<Ls...>> : std::bool_constant<(only_removes<Ls>::value && ...)> {};

template <class T>
struct is_cache_layer : std::false_type {};
template <class Len>
struct is_cache_layer<mask_layer<kv_cache_spec<Len>>> : std::true_type {};

// Whether a sub-graph holds a node for which Is<Node>::value (stops at inputs).
template <template <class> class Is, class Node>
constexpr bool contains_node();
template <template <class> class Is, class Children>
struct any_child_contains;
template <template <class> class Is, class... C>
struct any_child_contains<Is, hana::tuple<C...>> {
    static constexpr bool value = (contains_node<Is, C>() || ... || false);
};
template <template <class> class Is, class Node>
constexpr bool contains_node() {
    if constexpr (Is<Node>::value)
        return true;
    else if constexpr (is_a<Node, input_tag>)
        return false;
    else
        return any_child_contains<Is, std::remove_cvref_t<decltype(std::declval<Node>().children())>>::value;
}

// A mask whose kept pairs are known only at run time (it reads inputs or is a general predicate), as
// opposed to the bands (causal, sliding window), which are known when generating.
template <class Spec>
inline constexpr bool is_run_time_mask = is_a<Spec, key_padding_spec_tag> || is_a<Spec, boolean_mask_spec_tag> ||
                                         is_a<Spec, additive_mask_spec_tag> || is_a<Spec, predicate_spec_tag>;

// The keys the band masks leave to query q: [q − window, q] (causal: window < 0, every key up to q). A window known
// only at run time is the value of the scalar input window_input (where window < 0).
struct key_band {
    bool causal = false;
    int window = -1;
    std::string_view window_input;
};

// The pattern's values when the softmax itself is the result.
struct no_values {};

template <class Score, class Layers, class Values, fixed_string Label>
struct attention_pattern {
    Score score;    // a score_node
    Layers layers;  // hana::tuple of mask_layer / modify_layer, in the order they apply (innermost first)
    Values values;  // V (B, Hkv, Lk, E), or no_values

    static constexpr auto label = Label;
    static constexpr bool has_values = !std::is_same_v<Values, no_values>;
    // Only masks that remove pairs lie between the product and the softmax: a positive factor on the scores (the
    // base-2 exponent of the back ends) commutes with them (−∞ stays −∞); modifiers and additive masks read and add
    // natural units.
    static constexpr bool masks_only = all_mask_layers<Layers>::value;

    // kv_cache (nodes/mask.hpp): the keys are a cache with valid lengths per batch entry, and query i
    // sits at position lengths[b] − Lq + i for every layer. At most one per attention.
    static constexpr std::size_t cache_layers =
        decltype(hana::count_if(std::declval<Layers>(), [](auto l) {
            return hana::bool_c<is_cache_layer<decltype(l)>::value>;
        }))::value;
    static_assert(cache_layers <= 1, "attnforge: an attention takes at most one kv_cache mask");
    static constexpr bool has_cache = cache_layers == 1;
    // The cache lengths input (B) int32; only where has_cache.
    constexpr auto cache_lengths() const {
        return hana::find_if(layers, [](auto l) { return hana::bool_c<is_cache_layer<decltype(l)>::value>; })
            .value()
            .spec.lengths;
    }

    // Which rows of K and V hold keys: the cache's lengths input, or every row.
    constexpr auto valid_rows() const {
        if constexpr (has_cache)
            return cache_lengths();
        else
            return every_row{};
    }
    // Where the keys and the values come from (kv_source.hpp): what the back ends read K and V through.
    constexpr auto key_source() const { return kv_source_of(score.k, valid_rows()); }
    constexpr auto value_source() const requires has_values { return kv_source_of(values, valid_rows()); }

    // The keys the band masks leave, in positions: query position p sees keys [p − window, p].
    key_band band() const {
        key_band b;
        hana::for_each(layers, [&](const auto& layer) {
            using L = std::remove_cvref_t<decltype(layer)>;
            if constexpr (is_mask_layer<L>::value) {
                using Spec = decltype(layer.spec);
                if constexpr (is_a<Spec, causal_spec_tag>) {
                    b.causal = true;
                } else if constexpr (is_a<Spec, sliding_window_spec_tag>) {
                    // Two windows: the one known when generating bounds the loops (either alone is a superset of
                    // the pairs both keep; the predicates remove the rest).
                    b.causal = true;
                    if (layer.spec.window >= 0)
                        b.window = b.window < 0 ? layer.spec.window : std::min(b.window, layer.spec.window);
                    else if (b.window_input.empty())
                        b.window_input = layer.spec.window_input;
                }
            }
        });
        return b;
    }
};

namespace detail {
template <class T>
inline constexpr bool always_false = false;

// Peels the masks and modifiers off a chain of scores down to its score product.
template <class S>
constexpr auto peel_layers(const S& s) {
    if constexpr (is_a<S, score_tag>) {
        return hana::make_pair(s, hana::make_tuple());
    } else if constexpr (is_a<S, mask_tag>) {
        auto inner = peel_layers(s.scores);
        return hana::make_pair(hana::first(inner),
                               hana::append(hana::second(inner), mask_layer<decltype(s.spec)>{s.spec}));
    } else if constexpr (is_a<S, modify_tag>) {
        auto inner = peel_layers(s.scores);
        return hana::make_pair(hana::first(inner),
                               hana::append(hana::second(inner), modify_layer<decltype(s.expr)>{s.expr}));
    } else {
        static_assert(always_false<S>, "attnforge: a softmax's scores are made by score, mask and modify only");
    }
}
}  // namespace detail

template <class S, fixed_string Label>
constexpr auto match_attention(const softmax_node<S, Label>& p) {
    auto peeled = detail::peel_layers(p.scores);
    using Score = std::remove_cvref_t<decltype(hana::first(peeled))>;
    using Layers = std::remove_cvref_t<decltype(hana::second(peeled))>;
    using Pattern = attention_pattern<Score, Layers, no_values, Label>;
    // rope(q) rotates by the sequence index, from 0: under a cache the queries sit elsewhere.
    static_assert(!Pattern::has_cache || !contains_node<is_index_rope, decltype(Score::q)>(),
                  "attnforge: rope(q) in an attention with kv_cache would rotate the queries by their index "
                  "0..Lq-1, not by their cache positions: use rope_in_cache(q, lengths)");
    return Pattern{hana::first(peeled), hana::second(peeled), {}};
}

template <class P, class V>
constexpr auto match_attention(const weighted_sum_node<P, V>& n) {
    auto a = match_attention(n.probabilities);
    return attention_pattern<decltype(a.score), decltype(a.layers), V, decltype(a)::label>{a.score, a.layers, n.v};
}

}  // namespace attnforge::dsl
