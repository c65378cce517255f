// Compositions of the node factories that attention graphs repeat. Each is ordinary DSL: the nodes it
// builds are the ones a user would write by hand.
#pragma once

#include <attnforge/dsl/nodes/heads.hpp>
#include <attnforge/dsl/nodes/linear.hpp>
#include <attnforge/dsl/nodes/mask.hpp>
#include <attnforge/dsl/nodes/score.hpp>
#include <attnforge/dsl/nodes/softmax.hpp>
#include <attnforge/dsl/nodes/weighted_sum.hpp>

#include <boost/hana/fold_left.hpp>

namespace attnforge::dsl {

namespace detail {
// softmax(mask(...mask(s, m1)..., mn)) · v
template <fixed_string Label, class S, class V, class... Masks>
constexpr auto attend(S s, V v, Masks... masks) {
    auto masked = [&] {
        if constexpr (sizeof...(Masks) == 0)
            return s;
        else
            return hana::fold_left(hana::make_tuple(masks...), s, [](auto acc, auto m) { return mask(acc, m); });
    }();
    return weighted_sum(softmax<Label>(masked), v);
}
}  // namespace detail

// softmax(mask(...mask(score(q, k), m1)..., mn)) · v: scaled dot-product attention per head.
template <fixed_string Label = "attention", class Q, class K, class V, class... Masks>
constexpr auto attention(Q q, K k, V v, Masks... masks) {
    return detail::attend<Label>(score(q, k), v, masks...);
}

// The same with the scores' scale a run-time input (scale_input(): the call's, 1/√E where it gives none).
template <fixed_string Label = "attention", class Q, class K, class V, class S, class... Masks>
requires is_input<S>::value && is_scale<typename S::kind>::value constexpr auto attention(Q q, K k, V v, S scale,
                                                                                          Masks... masks) {
    return detail::attend<Label>(score(q, k, scale), v, masks...);
}

// Multi-head attention with projections: queries from xq, keys and values from xkv (the same tensor
// for self-attention), Hq query heads, Hkv key/value heads, output projection wo.
template <int Hq, int Hkv, fixed_string Label = "attention", class Xq, class Xkv, class Wq, class Wk, class Wv,
          class Wo, class... Masks>
constexpr auto multi_head_attention(Xq xq, Xkv xkv, Wq wq, Wk wk, Wv wv, Wo wo, Masks... masks) {
    auto q = split_heads<Hq>(linear(xq, wq));
    auto k = split_heads<Hkv>(linear(xkv, wk));
    auto v = split_heads<Hkv>(linear(xkv, wv));
    return linear(merge_heads(attention<Label>(q, k, v, masks...)), wo);
}

}  // namespace attnforge::dsl
