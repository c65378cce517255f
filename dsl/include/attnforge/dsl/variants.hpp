// The built-in variants (docs/contract.md §2 and more), each defined once in the DSL, one file per idea in
// variants/. Kernels, the interpreter, the CLI and the tests all reach them through
// `builtin_variants`; generated/kernels.list says which kernels the build makes of each.
#pragma once

#include <attnforge/dsl/variants/alibi.hpp>
#include <attnforge/dsl/variants/cross_attention.hpp>
#include <attnforge/dsl/variants/decode.hpp>
#include <attnforge/dsl/variants/decoder_layer.hpp>
#include <attnforge/dsl/variants/document_mask.hpp>
#include <attnforge/dsl/variants/gqa.hpp>
#include <attnforge/dsl/variants/masked_attention.hpp>
#include <attnforge/dsl/variants/mha.hpp>
#include <attnforge/dsl/variants/mqa.hpp>
#include <attnforge/dsl/variants/positional_self_attention_layer.hpp>
#include <attnforge/dsl/variants/prefix_lm.hpp>
#include <attnforge/dsl/variants/quantized_decode.hpp>
#include <attnforge/dsl/variants/relative_position_bias.hpp>
#include <attnforge/dsl/variants/rope.hpp>
#include <attnforge/dsl/variants/sdpa.hpp>
#include <attnforge/dsl/variants/sdpa_masks.hpp>
#include <attnforge/dsl/variants/seed_attention.hpp>
#include <attnforge/dsl/variants/self_attention_layer.hpp>
#include <attnforge/dsl/variants/sliding_window.hpp>
#include <attnforge/dsl/variants/softcap.hpp>

#include <boost/hana/tuple.hpp>

#include <string_view>
#include <utility>

namespace attnforge::dsl {

// Every built-in variant, in one list: docs/contract.md §2 first, then the demonstrations beyond it.
inline constexpr auto builtin_variants = hana::make_tuple(
    variants::seed_attention, variants::sdpa, variants::sdpa_causal, variants::mha, variants::mha_causal,
    variants::mha_padding, variants::mha_causal_padding, variants::mha_bias, variants::cross_attention, variants::gqa,
    variants::self_attention_layer, variants::decode, variants::decode_gqa, variants::sliding_window_attention,
    variants::alibi_attention, variants::softcap_attention, variants::masked_attention,
    variants::positional_self_attention_layer, variants::mqa, variants::prefix_lm_attention,
    variants::document_attention, variants::relative_position_attention, variants::rope_attention,
    variants::decoder_layer, variants::decode_sliding_window, variants::decode_rope, variants::sdpa_masked,
    variants::sdpa_additive, variants::sdpa_causal_masked, variants::decode_masked, variants::decode_softcap,
    variants::softcap_sliding_window_attention, variants::softcap_masked, variants::decode_softcap_masked,
    variants::decode_u8, variants::decode_i8, variants::decode_i8_g32, variants::decode_u8_kc128);

// Calls f(graph) for the built-in variant called `name`; returns false when there is none.
template <class F>
bool with_builtin_variant(std::string_view name, F&& f) {
    return with_graph_named(builtin_variants, name, std::forward<F>(f));
}

}  // namespace attnforge::dsl
