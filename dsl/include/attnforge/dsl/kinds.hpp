// Kinds: the compile-time "type" of every tensor in a graph. A kind fixes the rank, which sizes are
// static (model width D, head count H, head width E) and which are run-time (batch B, the lengths of
// named sequences). Two tensors share a run-time length exactly when they carry the same sequence tag,
// e.g. in cross-attention Lq is the length of sequence "x" and Lk that of sequence "memory".
//
// Layouts (row-major), B omitted when a kind is unbatched:
//   activation   (B, L, D)        heads        (B, H, L, E)
//   scores       (B, H, Lq, Lk)   weight       (D_in, D_out)      weight_vector (D)
//   key_padding  (B, Lk) bool, true = padded  attention_mask (B, Lq, Lk) bool, true = takes part
//   broadcast_mask (B or 1, H or 1, Lq, Lk): PyTorch's attn_mask, bool (true = takes part) or float (added)
//   sequence_values (B, L) one number per token   batch_values (B) one number per sequence   scalar () one
//   number: values
//   read by mask predicates and score modifiers (ex::read), float32 or, for index inputs (document ids,
//   prefix lengths), int32 (Integer)
//   cache_lengths (B) int32: the valid length of sequence Seq's cache per batch entry, in [0, L[Seq]]
//   codes        (B, H, L, E) uint8 or int8: a quantized cache's stored values, read through dequantize()
//   token_values (B, H, L) float32: one number per (b, h, token), a quantized cache's scales or zero points
//   group_scales (B, H, L, E/G) float32: one scale per G channels of a token, a quantized cache's (int8 codes)
//   channel_values (B, H, ⌈L/T⌉, E) float32: one number per channel of each block of T tokens, a quantized cache's
//                scales or zero points by channel (KIVI's keys)
#pragma once

#include <attnforge/dsl/fixed_string.hpp>
#include <attnforge/element_types.hpp>

#include <type_traits>

namespace attnforge::dsl {

// A head count fixed only at run time (sdpa's H): checked when the graph is bound to tensors.
inline constexpr int runtime_heads = 0;
// The keys' and values' head count fixed only at run time, Hkv, a divisor of the queries' run-time H: one graph
// serves MHA (Hkv = H), GQA and MQA (Hkv = 1); query head h reads key/value head h / (H / Hkv).
inline constexpr int runtime_kv_heads = -1;

// A head width fixed only at run time: E of the given heads of sdpa, sdpa_causal and decode, whose kernels are
// generated per head width (a kernel line's E=64,80,...: generated/kernels.list) and picked by the E of the call.
inline constexpr int runtime_head_width = 0;

// A size in a kind's label: the number, or Symbol where it is the run-time marker RunTime (E for runtime_head_width,
// Hkv for runtime_kv_heads).
template <int N, int RunTime, fixed_string Symbol>
constexpr auto size_label() {
    if constexpr (N == RunTime)
        return Symbol;
    else
        return int_string<N>();
}

template <fixed_string Seq, int W, bool Batched>
struct activation_kind {
    static constexpr auto seq = Seq;
    static constexpr int width = W;
    static constexpr bool batched = Batched;
    static constexpr auto label = cat("activation(L[", Seq, "], D=", int_string<W>(), ")");
};

template <fixed_string Seq, int H, int E, bool Batched>
struct heads_kind {
    static constexpr auto seq = Seq;
    static constexpr int heads = H;
    static constexpr int head_width = E;
    static constexpr bool batched = Batched;
    static constexpr auto label =
        cat("heads(H=", size_label<H, runtime_kv_heads, "Hkv">(), ", L[", Seq, "], E=",
            size_label<E, runtime_head_width, "E">(), ")");
};

// Probabilities: true once a softmax has been taken (masks and modifiers no longer apply).
template <fixed_string SeqQ, fixed_string SeqK, int H, bool Batched, bool Probabilities>
struct scores_kind {
    static constexpr auto seq_q = SeqQ;
    static constexpr auto seq_k = SeqK;
    static constexpr int heads = H;
    static constexpr bool batched = Batched;
    static constexpr bool probabilities = Probabilities;
    static constexpr auto label = [] {
        constexpr auto dims = cat("(H=", int_string<H>(), ", L[", SeqQ, "], L[", SeqK, "])");
        if constexpr (Probabilities)
            return cat("probabilities", dims);
        else
            return cat("scores", dims);
    }();
};

template <int In, int Out>
struct weight_kind {
    static constexpr int in_width = In;
    static constexpr int out_width = Out;
    static constexpr auto label = cat("weight(", int_string<In>(), ", ", int_string<Out>(), ")");
};

template <int W>
struct weight_vector_kind {
    static constexpr int width = W;
    static constexpr auto label = cat("weight_vector(", int_string<W>(), ")");
};

template <fixed_string SeqK, bool Batched>
struct key_padding_kind {
    static constexpr auto seq_k = SeqK;
    static constexpr bool batched = Batched;
    static constexpr auto label = cat("key_padding_mask(L[", SeqK, "])");
};

template <fixed_string SeqQ, fixed_string SeqK, bool Batched>
struct attention_mask_kind {
    static constexpr auto seq_q = SeqQ;
    static constexpr auto seq_k = SeqK;
    static constexpr bool batched = Batched;
    static constexpr auto label = cat("attention_mask(L[", SeqQ, "], L[", SeqK, "])");
};

// PyTorch's attn_mask (torch.nn.functional.scaled_dot_product_attention): (B, H, Lq, Lk) over the query heads, where
// the batch and the head axes may also be 1 (one mask for every batch entry, every head). Bool, true = the pair
// takes part; or, Additive, float values added to the scaled scores, −∞ excluding the pair.
template <fixed_string SeqQ, fixed_string SeqK, bool Additive>
struct broadcast_mask_kind {
    static constexpr auto seq_q = SeqQ;
    static constexpr auto seq_k = SeqK;
    static constexpr bool batched = true;
    static constexpr bool additive = Additive;
    static constexpr auto label = [] {
        constexpr auto dims = cat("(L[", SeqQ, "], L[", SeqK, "])");
        if constexpr (Additive)
            return cat("additive_mask", dims);
        else
            return cat("broadcast_mask", dims);
    }();
};

template <fixed_string Seq, bool Batched, bool Integer = false>
struct sequence_values_kind {
    static constexpr auto seq = Seq;
    static constexpr bool batched = Batched;
    static constexpr bool integer = Integer;
    static constexpr auto label = [] {
        if constexpr (Integer)
            return cat("sequence_indices(L[", Seq, "])");
        else
            return cat("sequence_values(L[", Seq, "])");
    }();
};

// The label of a kind of values read by expressions: its int32 form's or its float32 form's.
template <bool Integer, fixed_string Indices, fixed_string Values>
constexpr auto values_label() {
    if constexpr (Integer)
        return Indices;
    else
        return Values;
}

template <bool Integer = false>
struct batch_values_kind {
    static constexpr bool batched = true;
    static constexpr bool integer = Integer;
    static constexpr auto label = values_label<Integer, "batch_indices()", "batch_values()">();
};

// What an input is where a call does not give it: nothing (required), or the rule of an optional input (1/√E for a
// scale: scale_kind; a number given in the graph; ALiBi's slopes 2^(−8(h+1)/H) for the call's H).
enum class default_rule { required, inverse_sqrt_head_width, constant, alibi_slopes };

// A run-time scalar: a window length, a soft-cap, any number a predicate or modifier reads with no index
// (window()); int32 where Integer. Rank 0, the same for every batch entry; inside a kernel it is one value, so
// a predicate's bounds over a block read it (block skipping from a run-time window). Optional: a call may leave it
// out, and then it is DefaultNum / DefaultDen (a built-in variant's former constant: sliding_window_attention's
// 128). A ratio of integers, not a double: clang before 18 takes no floating-point template arguments.
template <bool Integer = false, bool Optional = false, long long DefaultNum = 0, long long DefaultDen = 1>
struct scalar_kind {
    static constexpr bool batched = false;
    static constexpr bool integer = Integer;
    static constexpr default_rule when_missing = Optional ? default_rule::constant : default_rule::required;
    static constexpr double default_value = static_cast<double>(DefaultNum) / static_cast<double>(DefaultDen);
    static constexpr auto label = values_label<Integer, "scalar_index()", "scalar_value()">();
};

// One number per head, (H): ALiBi's slopes, a per-head window or cap, read as slopes(h). H as the heads' (run-time:
// runtime_heads). Optional with Rule alibi_slopes: a call may leave it out, and then it is 2^(−8(h+1)/H).
template <int H = runtime_heads, default_rule Rule = default_rule::required>
struct head_values_kind {
    static constexpr bool batched = false;
    static constexpr int heads = H;
    static constexpr default_rule when_missing = Rule;
    static constexpr auto label = fixed_string("head_values(H)");
};

// A run-time scale of the scores, S = Q·Kᵀ · scale (score(q, k, s)): rank 0, float32 in every kernel, and optional:
// not given, it is 1/√E, E = Width, or the call's head width where Width is runtime_head_width.
template <int Width>
struct scale_kind {
    static constexpr bool batched = false;
    static constexpr int width = Width;
    static constexpr default_rule when_missing = default_rule::inverse_sqrt_head_width;
    static constexpr auto label = fixed_string("scale()");
};

// The valid length of a cache of sequence Seq (keys and values of earlier tokens, Lmax = L[Seq] slots),
// one per batch entry: slots at or past it hold nothing yet (kv_cache in nodes/mask.hpp).
template <fixed_string Seq>
struct cache_lengths_kind {
    static constexpr auto seq = Seq;
    static constexpr bool batched = true;
    static constexpr bool integer = true;
    static constexpr auto label = cat("cache_lengths(L[", Seq, "])");
};

// The codes of a quantized cache of sequence Seq (docs/contract.md §1, caches): (B, H, L, E) in element type Code
// (uint8, int8). Not heads: an attention reads them only as dequantize(codes, scale, zero) (nodes/dequantize.hpp).
template <fixed_string Seq, int H, int E, element_type Code>
struct codes_kind {
    static constexpr auto seq = Seq;
    static constexpr int heads = H;
    static constexpr int head_width = E;
    static constexpr bool batched = true;
    static constexpr element_type code = Code;
    static constexpr auto label = cat("codes(H=", size_label<H, runtime_kv_heads, "Hkv">(), ", L[", Seq,
                                      "], E=", size_label<E, runtime_head_width, "E">(), ")");
};

// What one number per token of a quantized cache is: the factor of its codes, or the code that stands for 0.
enum class quantization_role { scale, zero };

// (B, H, L) float32: one number per (b, h, token) of sequence Seq, the scales or zero points of a quantized cache
// (OpenVINO's by-token layout). Float32 in every kernel, whatever the storage type of its float tensors: the
// dequantized values are defined by them exactly.
template <fixed_string Seq, int H, quantization_role Role>
struct token_values_kind {
    static constexpr auto seq = Seq;
    static constexpr int heads = H;
    static constexpr bool batched = true;
    static constexpr quantization_role role = Role;
    static constexpr auto label = [] {
        constexpr auto dims = cat("(H=", size_label<H, runtime_kv_heads, "Hkv">(), ", L[", Seq, "])");
        if constexpr (Role == quantization_role::scale)
            return cat("token_scales", dims);
        else
            return cat("token_zeros", dims);
    }();
};

// (B, H, L, E/G) float32: a quantized cache's scale per group of G consecutive channels of each (b, h, token), for
// codes of head width E (llama.cpp's q8_0 blocks: G = 32). Float32 in every kernel, as token_values.
template <fixed_string Seq, int H, int E, int G>
struct group_scales_kind {
    static_assert(G > 0, "attnforge: a group of channels has at least one");
    static_assert(E == runtime_head_width || E % G == 0,
                  "attnforge: group_scales: the head width E must be a multiple of the group size G");
    static constexpr auto seq = Seq;
    static constexpr int heads = H;
    static constexpr int head_width = E;
    static constexpr int group = G;
    static constexpr bool batched = true;
    static constexpr auto label =
        cat("group_scales(H=", size_label<H, runtime_kv_heads, "Hkv">(), ", L[", Seq, "], E/", int_string<G>(), ")");
};

// (B, H, ⌈L/T⌉, E) float32: a quantized cache's scale (Role scale) or zero point (Role zero) per channel of each
// block of T consecutive tokens of sequence Seq (token l is in block l / T; the last block may be partial), for
// codes of head width E: keys by channel, as KIVI quantizes them, where a few channels carry outliers that a range
// per token would spend its codes on. Float32 in every kernel, as token_values.
template <fixed_string Seq, int H, int E, int T, quantization_role Role>
struct channel_values_kind {
    static_assert(T > 0, "attnforge: a block of tokens has at least one");
    static constexpr auto seq = Seq;
    static constexpr int heads = H;
    static constexpr int head_width = E;
    static constexpr int token_block = T;
    static constexpr bool batched = true;
    static constexpr quantization_role role = Role;
    static constexpr auto label = [] {
        constexpr auto dims = cat("(H=", size_label<H, runtime_kv_heads, "Hkv">(), ", L[", Seq, "]/",
                                  int_string<T>(), ", E=", size_label<E, runtime_head_width, "E">(), ")");
        if constexpr (Role == quantization_role::scale)
            return cat("channel_scales", dims);
        else
            return cat("channel_zeros", dims);
    }();
};

// Kind tests, SFINAE-friendly (they never hard-error).
template <class K>
struct is_activation : std::false_type {};
template <fixed_string S, int W, bool Bt>
struct is_activation<activation_kind<S, W, Bt>> : std::true_type {};
template <class K>
struct is_heads : std::false_type {};
template <fixed_string S, int H, int E, bool Bt>
struct is_heads<heads_kind<S, H, E, Bt>> : std::true_type {};
template <class K>
struct is_scores : std::false_type {};
template <fixed_string Q, fixed_string K, int H, bool Bt, bool P>
struct is_scores<scores_kind<Q, K, H, Bt, P>> : std::true_type {};
template <class K>
struct is_weight : std::false_type {};
template <int I, int O>
struct is_weight<weight_kind<I, O>> : std::true_type {};
template <class K>
struct is_weight_vector : std::false_type {};
template <int W>
struct is_weight_vector<weight_vector_kind<W>> : std::true_type {};
template <class K>
struct is_key_padding : std::false_type {};
template <fixed_string S, bool Bt>
struct is_key_padding<key_padding_kind<S, Bt>> : std::true_type {};
template <class K>
struct is_attention_mask : std::false_type {};
template <fixed_string Q, fixed_string K, bool Bt>
struct is_attention_mask<attention_mask_kind<Q, K, Bt>> : std::true_type {};

template <class K>
struct is_broadcast_mask : std::false_type {};
template <fixed_string Q, fixed_string K, bool A>
struct is_broadcast_mask<broadcast_mask_kind<Q, K, A>> : std::true_type {};

template <class K>
struct is_sequence_values : std::false_type {};
template <fixed_string S, bool Bt, bool I>
struct is_sequence_values<sequence_values_kind<S, Bt, I>> : std::true_type {};
template <class K>
struct is_batch_values : std::false_type {};
template <bool I>
struct is_batch_values<batch_values_kind<I>> : std::true_type {};
template <class K>
struct is_scalar : std::false_type {};
template <bool I, bool O, long long N, long long D>
struct is_scalar<scalar_kind<I, O, N, D>> : std::true_type {};
template <class K>
struct is_head_values : std::false_type {};
template <int H, default_rule R>
struct is_head_values<head_values_kind<H, R>> : std::true_type {};
template <class K>
struct is_scale : std::false_type {};
template <int W>
struct is_scale<scale_kind<W>> : std::true_type {};
template <class K>
struct is_cache_lengths : std::false_type {};
template <fixed_string S>
struct is_cache_lengths<cache_lengths_kind<S>> : std::true_type {};

template <class K>
struct is_codes : std::false_type {};
template <fixed_string S, int H, int E, element_type C>
struct is_codes<codes_kind<S, H, E, C>> : std::true_type {};
template <class K>
struct is_token_values : std::false_type {};
template <fixed_string S, int H, quantization_role R>
struct is_token_values<token_values_kind<S, H, R>> : std::true_type {};

template <class K>
struct is_group_scales : std::false_type {};
template <fixed_string S, int H, int E, int G>
struct is_group_scales<group_scales_kind<S, H, E, G>> : std::true_type {};
template <class K>
struct is_channel_values : std::false_type {};
template <fixed_string S, int H, int E, int T, quantization_role R>
struct is_channel_values<channel_values_kind<S, H, E, T, R>> : std::true_type {};

template <class K>
inline constexpr bool is_activation_v = is_activation<K>::value;
template <class K>
inline constexpr bool is_heads_v = is_heads<K>::value;
template <class K>
inline constexpr bool is_scores_v = is_scores<K>::value;
template <class K>
inline constexpr bool is_weight_v = is_weight<K>::value;
template <class K>
inline constexpr bool is_weight_vector_v = is_weight_vector<K>::value;

// The rank of a tensor of kind K, as given by the user (batch axis included when batched).
template <class K>
constexpr int kind_rank() {
    int own = 0;
    if constexpr (is_activation_v<K>)
        own = 2;
    else if constexpr (is_heads_v<K> || is_scores_v<K> || is_broadcast_mask<K>::value || is_codes<K>::value ||
                       is_group_scales<K>::value || is_channel_values<K>::value)
        own = 3;
    else if constexpr (is_token_values<K>::value)
        own = 2;
    else if constexpr (is_weight_v<K>)
        own = 2;
    else if constexpr (is_weight_vector_v<K>)
        own = 1;
    else if constexpr (is_key_padding<K>::value || is_sequence_values<K>::value || is_head_values<K>::value)
        own = 1;
    else if constexpr (is_attention_mask<K>::value)
        own = 2;
    else if constexpr (is_batch_values<K>::value || is_cache_lengths<K>::value || is_scalar<K>::value ||
                       is_scale<K>::value)
        own = 0;
    if constexpr (requires { K::batched; })
        return own + (K::batched ? 1 : 0);
    else
        return own;
}

}  // namespace attnforge::dsl
