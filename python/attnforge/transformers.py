"""attnforge as a transformers attention implementation (docs/contract.md §6, docs/pytorch.md).

    >>> import attnforge.transformers
    >>> attnforge.transformers.register()
    >>> model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="attnforge")

register() adds an attention function and a mask function under one name. The mask function is transformers'
own `sdpa_mask` (bool masks, True = the pair takes part, and no mask at all where a plain causal one does), so
the model hands the attention function what it would hand SDPA; the attention function computes it with the
operator of attnforge.torch: GQA without repeating keys and values, the output written in the (B, L, H, E)
layout the model reshapes, a soft-cap where the model passes one (Gemma-2), and over a static cache only the
slots the mask keeps are read.

QuantizedStaticCache (attnforge/quantized_cache.py) is a cache of 8-bit codes for such a model: `cache=
QuantizedStaticCache(model.config, max_cache_len, storage="u8")`; the attention function reads its codes in place.
"""

from __future__ import annotations

import torch

from . import torch as _attnforge_torch  # registers torch.ops.attnforge.attention

__all__ = ["register", "attention_forward", "NAME", "QuantizedStaticCache"]


def __getattr__(name):
    # QuantizedStaticCache subclasses transformers' Cache: imported on first use, so that this module (and
    # attention_forward) imports without transformers, which register() asks for.
    if name == "QuantizedStaticCache":
        from .quantized_cache import QuantizedStaticCache
        return QuantizedStaticCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

NAME = "attnforge"


def attention_forward(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                      is_causal: bool | None = None, softcap: float | None = None, **kwargs):
    """transformers' attention-function signature: query (B, Hq, Lq, E), key and value (B, Hkv, Lk, E) as the
    model has them (caches included), the mask its mask function made. Returns ((B, Lq, Hq, E), None)."""
    if dropout:
        raise ValueError(f"attnforge: attention dropout {dropout} in training mode is not supported "
                         "(model.eval() for inference)")
    if kwargs.get("position_bias") is not None:
        raise ValueError("attnforge: a position_bias (T5-style) is not supported by this attention implementation")
    if kwargs.get("s_aux") is not None:
        raise ValueError("attnforge: attention sinks (s_aux) are not supported by this attention implementation")
    if kwargs.get("output_attentions", False):
        raise ValueError("attnforge: output_attentions=True needs the attention weights; use "
                         "attn_implementation='eager' for them")
    # The sdpa integration's reading of a missing mask (masking_utils skips it exactly where this is right):
    # causal for a prompt, nothing for one query over its cache.
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    if (quantized := getattr(key, "_attnforge_quantized_layer", None)) is not None:
        # Keys and values a QuantizedStaticCache holds as codes: its decode kernel over them.
        with quantized.emptied_on_error():
            return quantized.attend(query, attention_mask, scaling, softcap, kwargs.get("sliding_window"),
                                    causal), None
    if (prompt := getattr(key, "_attnforge_quantized_prompt", None)) is not None:
        # A prompt into a QuantizedStaticCache attends over its keys as computed; the steps after it will read the
        # codes, which take no mask: a padded batch is refused at the prompt's first layer.
        with prompt.emptied_on_error():
            prompt.check_call(attention_mask, query.shape[2], key.shape[2], softcap, kwargs.get("sliding_window"),
                              causal)
    Lq, Lk = query.shape[2], key.shape[2]
    causal = Lq > 1 and attention_mask is None and causal
    if causal and Lk > Lq:
        # A prompt into an empty static cache: keys past the prompt are empty slots, which top-left causality
        # never reaches; the views keep the kernels from walking them.
        key, value = key[:, :, :Lq], value[:, :, :Lq]
    out, _ = _attnforge_torch.call(query, key, value, attention_mask, bool(causal),
                                   None if scaling is None else float(scaling),
                                   None if softcap is None else float(softcap), True, False, True)
    return out, None


def register(name: str = NAME) -> str:
    """Makes `attn_implementation=name` ("attnforge") available to transformers models; returns the name.

    Registers the attention function and, under the same name, transformers' SDPA mask function (without a
    mask function of its name a model would build no causal mask at all)."""
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    except ImportError as error:
        raise ImportError("attnforge.transformers needs the transformers package (pip install transformers)") \
            from error
    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, sdpa_mask)
    return name
