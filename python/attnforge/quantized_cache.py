"""A transformers KV cache held as 8-bit codes, read in place by attnforge's quantized decode kernels
(docs/pytorch.md, docs/storage_types.md).

    >>> from attnforge.transformers import QuantizedStaticCache, register
    >>> register()
    >>> model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="attnforge")
    >>> cache = QuantizedStaticCache(model.config, max_cache_len=4096, storage="u8")
    >>> model.generate(ids, cache=cache, max_new_tokens=64)

Each layer preallocates its keys and values as codes (B, Hkv, max_cache_len, E) with their scales (and zero points):
`storage` "u8" (decode_u8: uint8 codes with a float32 scale and zero point per token, OpenVINO's u8 layout), "i8"
(decode_i8: int8, a scale per token), "i8_g32" (decode_i8_g32: int8, a scale per 32 channels, llama.cpp's q8_0
blocks) or "u8_kc128" (decode_u8_kc128: keys uint8 by channel, a scale and zero point per channel of each block of
128 tokens, KIVI's; values as "u8"; the block being filled is kept in float32 beside the codes, 128·E·4 bytes a
layer, KV head and batch entry, and quantized again at each update). update() writes the new tokens' codes into the next slots (attnforge.quantize_into_cache, the rules of
docs/storage_types.md); the attention function then runs the variant's kernel over the codes as they are, reading
only the written slots: no dequantized copy of the cache is ever made (transformers' own QuantizedCache dequantizes
the whole cache at every step).

The prompt (the first update of an empty cache) attends over its keys and values as the model computed them, before
they are quantized, as transformers' QuantizedCache and OpenVINO's u8 cache do; every later update, one token or a
chunk of any length (a prompt given in chunks from its second on), attends over the codes, its own included.

What it serves: causal layers of full attention (no sliding window, no soft-cap), batches whose rows all hold every
cached token (no padding: the kernels take a length per batch entry, not a mask), float32 and bf16 models. Anything
else is refused with the reason when the cache is made, at its first update, or at the first layer that hands it
what it cannot serve; a call refused there leaves the whole cache empty (reset), never half written.
"""

from __future__ import annotations

import contextlib

import torch

from . import _native

__all__ = ["QuantizedStaticCache", "QuantizedStaticLayer", "STORAGES"]

# storage: (variant, code dtype, zero point, channels per scale (None: one scale a token), tokens per block of the
# keys' scales by channel (None: the keys' scales by token, as the values'))
STORAGES = {
    "u8": ("decode_u8", torch.uint8, True, None, None),
    "i8": ("decode_i8", torch.int8, False, None, None),
    "i8_g32": ("decode_i8_g32", torch.int8, False, 32, None),
    "u8_kc128": ("decode_u8_kc128", torch.uint8, True, None, 128),
}


try:
    import transformers.cache_utils as _cache_utils
except ImportError as error:
    raise ImportError("attnforge.transformers needs the transformers package (pip install transformers)") from error


def _causal_keep(Lq: int, Lk: int) -> torch.Tensor:
    """The pairs a decode over Lk cached keys computes for its last Lq queries: query i sees keys ≤ Lk − Lq + i."""
    return torch.ones((Lq, Lk), dtype=torch.bool).tril(Lk - Lq)


def _check_mask(mask: torch.Tensor | None, Lq: int, Lk: int) -> None:
    """Refuses a mask that is not the causal pattern over every cached key (padding, a custom pattern): the quantized
    kernels take a length per batch entry, not a mask, and would silently read what the mask removes."""
    if mask is None:
        return
    if mask.shape[-2] != Lq or mask.shape[-1] < Lk:
        raise ValueError(f"attnforge QuantizedStaticCache: an attention mask of shape {tuple(mask.shape)} for "
                         f"{Lq} queries over {Lk} cached keys (expected (B, 1, {Lq}, {Lk}))")
    mask = mask[..., :Lk]
    keep = mask if mask.dtype == torch.bool else mask == 0
    if mask.dtype != torch.bool and not bool(torch.all(keep | torch.isneginf(mask))):
        raise ValueError("attnforge QuantizedStaticCache: an additive attention mask other than 0 and −inf")
    if not torch.equal(keep, _causal_keep(Lq, Lk).expand(keep.shape)):
        raise ValueError(
            "attnforge QuantizedStaticCache: the attention mask removes pairs of a causal decode over every cached "
            "key (a padded batch or a custom mask); the quantized cache serves batches without padding (prompts of "
            "one length): use StaticCache or DynamicCache for padded batches")


class QuantizedStaticLayer(_cache_utils.CacheLayerMixin):
    """One layer's keys and values as 8-bit codes in preallocated buffers (see the module's docstring)."""

    is_compileable = False
    is_croppable = True
    is_sliding = False
    _buffers = ("keys", "values", "key_scale", "value_scale", "key_zero", "value_zero", "key_open_block", "kv_length")

    def __init__(self, max_cache_len: int, storage: str = "u8"):
        super().__init__()
        if storage not in STORAGES:
            raise ValueError(f"attnforge QuantizedStaticCache: storage {storage!r}; expected one of "
                             f"{', '.join(STORAGES)}")
        if max_cache_len < 1:
            raise ValueError(f"attnforge QuantizedStaticCache: max_cache_len {max_cache_len}; expected ≥ 1")
        self.max_cache_len = max_cache_len
        self.storage = storage
        self.cumulative_length = 0
        # Keys by channel: the first slot of the block the last write ended in, whose tokens key_open_block keeps
        # (the writer quantizes that block again from them): a crop may not go below it.
        self.kept_block_start = 0
        self.owner = None  # the QuantizedStaticCache holding this layer: emptied whole when a call is refused

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        _, code_type, zero_point, group, key_block = STORAGES[self.storage]
        B, Hkv, _, E = key_states.shape
        if tuple(value_states.shape[:2]) != (B, Hkv) or value_states.shape[-1] != E:
            raise ValueError(f"attnforge QuantizedStaticCache: values {tuple(value_states.shape)} beside keys "
                             f"{tuple(key_states.shape)} (expected the keys' B, Hkv and E)")
        if group and E % group:
            raise ValueError(f"attnforge QuantizedStaticCache: storage {self.storage!r} keeps a scale per {group} "
                             f"channels; the head width E = {E} is not a multiple of {group}")
        if key_states.device.type != "cpu":
            raise ValueError(f"attnforge QuantizedStaticCache: keys on {key_states.device}; expected the CPU")
        if key_states.dtype not in (torch.float32, torch.bfloat16) or value_states.dtype != key_states.dtype:
            raise ValueError(f"attnforge QuantizedStaticCache: keys {key_states.dtype} and values {value_states.dtype};"
                             " expected float32 or bfloat16 models (the quantized kernels' queries and outputs)")
        L = self.max_cache_len
        self.device = key_states.device
        scale_shape = (B, Hkv, L) + ((E // group,) if group else ())
        self.keys = torch.zeros((B, Hkv, L, E), dtype=code_type)
        self.values = torch.zeros((B, Hkv, L, E), dtype=code_type)
        self.key_scale, self.value_scale = torch.zeros(scale_shape), torch.zeros(scale_shape)
        self.key_zero = torch.zeros((B, Hkv, L)) if zero_point else None
        self.value_zero = torch.zeros((B, Hkv, L)) if zero_point else None
        self.key_open_block = None
        if key_block:  # keys by channel: a scale and zero point per channel of each block, the open block kept
            blocks = -(-L // key_block)
            self.key_scale, self.key_zero = torch.zeros((B, Hkv, blocks, E)), torch.zeros((B, Hkv, blocks, E))
            self.key_open_block = torch.zeros((B, Hkv, key_block, E))
        self.kv_length = torch.zeros((B,), dtype=torch.int32)  # the same for every entry: no padding
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        """Quantizes the new tokens into the next slots; returns what the attention function reads: for the prompt
        its keys and values as computed, afterwards the code buffers (which carry this layer for it)."""
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        new = key_states.shape[-2]
        if value_states.shape[-2] != new:
            raise ValueError(f"attnforge QuantizedStaticCache: {new} new keys beside {value_states.shape[-2]} new "
                             "values (expected as many)")
        if self.cumulative_length + new > self.max_cache_len:
            raise ValueError(f"attnforge QuantizedStaticCache: {self.cumulative_length} cached tokens and {new} new "
                             f"ones exceed max_cache_len = {self.max_cache_len}")
        prompt = self.cumulative_length == 0
        _native.quantize_into_cache(key_states, self.kv_length, self.keys, self.key_scale, self.key_zero,
                                    self.key_open_block)
        _native.quantize_into_cache(value_states, self.kv_length, self.values, self.value_scale, self.value_zero)
        self.kv_length += new
        self.cumulative_length += new
        key_block = STORAGES[self.storage][4]
        if key_block and new:
            self.kept_block_start = (self.cumulative_length - 1) // key_block * key_block
        if prompt:
            key_states._attnforge_quantized_prompt = self  # the attention function checks the prompt's mask
            return key_states, value_states
        self.keys._attnforge_quantized_layer = self
        return self.keys, self.values

    @contextlib.contextmanager
    def emptied_on_error(self):
        """Empties the whole cache (every layer) when the block raises: a refused call must not leave the first
        layers holding tokens the others lack, which a later call would read as a continuation."""
        try:
            yield
        except Exception:
            if self.owner is not None:
                self.owner.reset()
            else:
                self.reset()
            raise

    def check_call(self, mask: torch.Tensor | None, Lq: int, Lk: int, softcap: float | None,
                   sliding_window: int | None, causal: bool) -> None:
        """Refuses what the quantized kernels cannot compute: a soft-cap, a window, a non-causal layer, a mask
        other than the causal pattern over every cached key."""
        if softcap:
            raise ValueError(f"attnforge QuantizedStaticCache: a soft-cap ({softcap}) is not served over a quantized "
                             "cache")
        if sliding_window:
            raise ValueError(f"attnforge QuantizedStaticCache: a sliding window ({sliding_window}) is not served "
                             "over a quantized cache")
        if not causal:
            raise ValueError("attnforge QuantizedStaticCache: a non-causal attention layer; the quantized kernels "
                             "are causal over the cache")
        if mask is not None and self.owner is not None and mask is self.owner._checked_mask:
            return  # the same mask object the previous layer checked (a model hands each layer the same one)
        _check_mask(mask, Lq, Lk)
        if self.owner is not None:
            self.owner._checked_mask = mask

    def attend(self, query: torch.Tensor, mask: torch.Tensor | None, scaling: float | None,
               softcap: float | None, sliding_window: int | None, causal: bool = True) -> torch.Tensor:
        """Attention of query (B, Hq, Lq, E) over every cached token, the last Lq being the query's own (causal,
        bottom-right), by the storage's decode kernel on the codes; the output as (B, Lq, Hq, E)."""
        B, Hq, Lq, E = query.shape
        Lk = self.cumulative_length
        self.check_call(mask, Lq, Lk, softcap, sliding_window, causal)
        variant, _, zero_point, _, key_block = STORAGES[self.storage]
        key_rows = -(-Lk // key_block) if key_block else Lk  # the keys' scales: one a block of tokens, or a token
        inputs = dict(q=query, k=self.keys[:, :, :Lk], k_scale=self.key_scale[:, :, :key_rows],
                      v=self.values[:, :, :Lk], v_scale=self.value_scale[:, :, :Lk], kv_length=self.kv_length)
        if zero_point:
            inputs.update(k_zero=self.key_zero[:, :, :key_rows], v_zero=self.value_zero[:, :, :Lk])
        if scaling is not None:
            inputs["scale"] = float(scaling)
        out = torch.empty((B, Lq, Hq, E), dtype=query.dtype)
        _native.run(variant, out=out.transpose(1, 2), **inputs)
        return out

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.cumulative_length + query_length, 0

    def get_seq_length(self) -> int:
        return self.cumulative_length

    def get_max_length(self) -> int:
        return self.max_cache_len

    def reset(self) -> None:
        if self.is_initialized:
            self.kv_length.zero_()
        self.cumulative_length = 0
        self.kept_block_start = 0
        if self.owner is not None:
            self.owner._checked_mask = None

    def crop(self, tokens_to_remove: int) -> None:
        """Forgets the last |tokens_to_remove| tokens (a negative count, transformers' convention); their slots are
        written again by the next update."""
        if tokens_to_remove > 0:
            raise ValueError("attnforge QuantizedStaticCache: crop takes a negative count of tokens to remove")
        removed = min(-tokens_to_remove, self.cumulative_length)
        key_block = STORAGES[self.storage][4]
        if key_block and 0 < self.cumulative_length - removed < self.kept_block_start:
            # Keys by channel keep the values of the block the last write ended in only: an earlier block cannot be
            # quantized again when tokens are written into it after the crop (to 0 tokens nothing is read).
            raise ValueError(f"attnforge QuantizedStaticCache: storage {self.storage!r} can crop only within the "
                             f"block of {key_block} tokens the last update wrote into (to {self.kept_block_start} "
                             f"tokens or more); asked to remove {removed} of {self.cumulative_length}")
        self.cumulative_length -= removed
        if self.is_initialized:
            self.kv_length -= removed

    def _map_batch(self, change) -> None:
        """Every buffer's batch axis changed alike (beam search, contrastive search)."""
        if not self.is_initialized:
            return
        for name in self._buffers:
            buffer = getattr(self, name)
            if buffer is not None:
                setattr(self, name, change(buffer).contiguous())

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self._map_batch(lambda t: t.index_select(0, beam_idx.cpu()))

    def batch_repeat_interleave(self, repeats: int) -> None:
        self._map_batch(lambda t: t.repeat_interleave(repeats, dim=0))

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self._map_batch(lambda t: t[indices.cpu() if isinstance(indices, torch.Tensor) else indices])

    def offload(self):
        pass  # CPU memory already

    def prefetch(self):
        pass


class QuantizedStaticCache(_cache_utils.Cache):
    """A KV cache of 8-bit codes for a model run with attn_implementation="attnforge" (the module's docstring):
    QuantizedStaticCache(config, max_cache_len, storage="u8" | "i8" | "i8_g32" | "u8_kc128")."""

    def __init__(self, config, max_cache_len: int, storage: str = "u8"):
        text = config.get_text_config(decoder=True)
        layer_types, _ = _cache_utils.get_layer_types_and_kwargs(text)
        for index, layer_type in enumerate(layer_types):
            if layer_type != "full_attention":
                raise ValueError(f"attnforge QuantizedStaticCache: layer {index} is {layer_type!r}; the quantized "
                                 "cache serves layers of full attention only (no sliding windows)")
        if getattr(text, "attn_logit_softcapping", None):
            raise ValueError("attnforge QuantizedStaticCache: the model soft-caps its attention scores "
                             f"({text.attn_logit_softcapping}), which no quantized kernel does")
        super().__init__(layers=[QuantizedStaticLayer(max_cache_len, storage) for _ in layer_types])
        self.storage = storage
        self.max_cache_len = max_cache_len
        self._checked_mask = None  # shared by the layers: one check of a forward's mask
        for layer in self.layers:
            layer.owner = self
