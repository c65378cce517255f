"""attnforge as PyTorch's scaled_dot_product_attention (docs/contract.md §6, docs/pytorch.md).

    >>> from attnforge.torch import scaled_dot_product_attention
    >>> y = scaled_dot_product_attention(q, k, v, is_causal=True)     # torch's arguments, torch's meaning

The call is the custom operator ``torch.ops.attnforge.attention`` (torch.library.custom_op, with a fake
implementation), so ``torch.compile(fullgraph=True)`` traces through it without a graph break; its body picks a
built-in variant for the arguments and calls that variant's kernel on the tensors as they are (strided views read
in place). What the kernels cannot serve raises: dropout, gradients, devices other than the CPU, masks of a dtype
torch would refuse, a head width the build has no kernel for. Nothing falls back to another implementation.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
import torch

from . import _native

__all__ = ["scaled_dot_product_attention", "attention"]

_FLOAT_TYPES = (torch.float32, torch.bfloat16, torch.float16)


def _variant(has_mask: bool, mask_is_bool: bool, is_causal: bool, softcap: Optional[float], Lq: int) -> str:
    """The built-in variant that computes these arguments' attention (docs/pytorch.md has the table).

    Decode forms (a cache with kv_length, bottom-right causal) only where that changes nothing: Lq = 1 with
    kv_length = Lk sees every key, as torch's call without is_causal does."""
    if softcap is not None:
        if not has_mask:
            if is_causal:
                return "softcap_attention"
            if Lq == 1:
                return "decode_softcap"
            raise ValueError("attnforge: soft-capped attention without a mask is built causal (softcap_attention) "
                             "or for one query over a cache (decode_softcap); for Lq > 1 without causality, "
                             "give an attn_mask")
        if not mask_is_bool:
            raise ValueError("attnforge: soft-capped attention takes a bool attn_mask (softcap_masked); "
                             "an additive float mask is not built with a soft-cap")
        return "decode_softcap_masked" if Lq == 1 else "softcap_masked"
    if not has_mask:
        if is_causal:
            return "sdpa_causal"
        return "decode" if Lq == 1 else "sdpa"
    if not mask_is_bool:
        return "sdpa_additive"
    return "decode_masked" if Lq == 1 else "sdpa_masked"


def _check_arguments(query, key, value, attn_mask, is_causal, enable_gqa):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"attnforge: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.device.type != "cpu":
            raise ValueError(f"attnforge: {name} is on {t.device}; attnforge's kernels run on the CPU")
        if t.dim() != 4:
            raise ValueError(f"attnforge: {name} must be (B, H, L, E), got shape {tuple(t.shape)}")
        if t.dtype not in _FLOAT_TYPES:
            raise ValueError(f"attnforge: {name} has dtype {t.dtype}; expected float32, bfloat16 or float16")
    if not (query.dtype == key.dtype == value.dtype):
        raise ValueError(f"attnforge: query, key and value must have one dtype (as torch requires), got "
                         f"{query.dtype}, {key.dtype}, {value.dtype}")
    B, Hq, Lq, E = query.shape
    if key.shape != value.shape:
        raise ValueError(f"attnforge: key {tuple(key.shape)} and value {tuple(value.shape)} must have one shape "
                         "(a value head width other than the query's is not built)")
    if key.shape[0] != B or key.shape[3] != E:
        raise ValueError(f"attnforge: key {tuple(key.shape)} does not match query {tuple(query.shape)} in B or E")
    Hkv = key.shape[1]
    if Hkv != Hq and not enable_gqa:
        raise ValueError(f"attnforge: query has {Hq} heads and key {Hkv}: pass enable_gqa=True for grouped-query "
                         "attention (as torch requires)")
    if Hq % Hkv:
        raise ValueError(f"attnforge: query heads ({Hq}) must be a multiple of key/value heads ({Hkv})")
    if attn_mask is not None:
        if is_causal:
            raise ValueError("attnforge: attn_mask and is_causal=True are exclusive (as in torch); put the causal "
                             "pattern into the mask")
        if not isinstance(attn_mask, torch.Tensor) or attn_mask.device.type != "cpu":
            raise ValueError("attnforge: attn_mask must be a CPU torch.Tensor")
        if attn_mask.dtype != torch.bool and attn_mask.dtype != query.dtype:
            raise ValueError(f"attnforge: attn_mask must be bool or query's dtype ({query.dtype}), got "
                             f"{attn_mask.dtype}")
        target = (B, Hq, Lq, key.shape[2])  # torch's broadcasting rule, without torch.broadcast_shapes' cost
        if attn_mask.dim() > 4 or any(m not in (1, t) for m, t in zip(reversed(attn_mask.shape), reversed(target))):
            raise ValueError(f"attnforge: attn_mask of shape {tuple(attn_mask.shape)} does not broadcast to "
                             f"(B, H, Lq, Lk) = {target}")


def _mask_view(attn_mask: torch.Tensor, B: int, Hq: int, Lq: int, Lk: int) -> torch.Tensor:
    """The mask as the kernels take it: (B or 1, H or 1, Lq, Lk), broadcast axes as strides of 0 (no copy)."""
    m = attn_mask
    while m.dim() < 4:
        m = m.unsqueeze(0)
    return m.expand(m.shape[0], m.shape[1], Lq, Lk)


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: Optional[torch.Tensor],
              is_causal: bool, scale: Optional[float], softcap: Optional[float], return_lse: bool,
              heads_last: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of (B, Hq, Lq, E) queries over (B, Hkv, Lk, E) keys and values (Hq a multiple of Hkv).

    attn_mask: None, bool (True = the pair takes part) or additive float, broadcastable to (B, Hq, Lq, Lk);
    is_causal: top-left, as torch's; softcap: cap · tanh(score / cap) before the mask (Gemma-2).
    Returns (output, lse): output (B, Hq, Lq, E), or (B, Lq, Hq, E) when heads_last (the layout a model reshapes
    to (B, Lq, Hq·E)); lse the natural log-sum-exp of each row's scaled scores (B, Hq, Lq) float32 when
    return_lse, else an empty tensor. Rows the mask removes entirely give zeros (torch gives NaN)."""
    B, Hq, Lq, E = query.shape
    Lk = key.shape[2]
    inputs = {"q": query, "k": key, "v": value}
    mask = None if attn_mask is None else _mask_view(attn_mask, B, Hq, Lq, Lk)
    if mask is not None and mask.dtype == torch.bool and Lq <= 16:
        # Keys no query keeps are not read at all (a static cache's empty slots: kv_length below), and a mask that
        # keeps every pair left is no mask (one token over a cache without padding); in NumPy, on the tensor's
        # memory: a few microseconds, where torch's reductions would wake its thread pool.
        keep = mask.numpy()
        kept = np.flatnonzero(keep.reshape(-1, Lk).any(axis=0))
        live = int(kept[-1]) + 1 if kept.size else 0
        if live < Lk:
            Lk = live
            mask = mask[..., :Lk]
            inputs["k"], inputs["v"] = key[:, :, :Lk], value[:, :, :Lk]
        if Lq == 1 and Lk > 0 and keep[..., :Lk].all():
            mask = None
    variant = _variant(mask is not None, mask is not None and mask.dtype == torch.bool, is_causal, softcap, Lq)
    if mask is not None:
        inputs["attn_mask"] = mask
    # Small inputs as NumPy arrays: no torch operator (and its thread pool) for them.
    if variant.startswith("decode"):
        inputs["kv_length"] = np.full((B,), Lk, dtype=np.int32)
    if scale is not None:
        inputs["scale"] = np.float32(scale)
    if softcap is not None:
        inputs["cap"] = np.float32(softcap)

    if heads_last:
        out = torch.empty((B, Lq, Hq, E), dtype=query.dtype)
        target = out.transpose(1, 2)
    else:
        out = torch.empty((B, Hq, Lq, E), dtype=query.dtype)
        target = out
    if Lk == 0:
        target.zero_()
    else:
        _native.run(variant, out=target, **inputs)
    lse = torch.empty((0,), dtype=torch.float32)
    if return_lse:
        lse = torch.full((B, Hq, Lq), -math.inf, dtype=torch.float32)
        if Lk > 0:
            lse = _native.run(variant, result="logsumexp", **inputs)
    return out, lse


# The operator torch.compile sees (its body: _attention). Eager callers below call the body directly, which saves
# the dispatcher's round trip through Python (~70 µs a call, measured on Zen 4); a compiled graph calls the operator.
attention = torch.library.custom_op("attnforge::attention", _attention, mutates_args=())


@attention.register_fake
def _(query, key, value, attn_mask, is_causal, scale, softcap, return_lse, heads_last):
    B, Hq, Lq, E = query.shape
    out_shape = (B, Lq, Hq, E) if heads_last else (B, Hq, Lq, E)
    lse_shape = (B, Hq, Lq) if return_lse else (0,)
    return query.new_empty(out_shape), query.new_empty(lse_shape, dtype=torch.float32)


def _refuse_unsupported(query, key, value, attn_mask, dropout_p):
    if dropout_p:
        raise ValueError(f"attnforge: dropout_p = {dropout_p} is not supported (inference kernels: dropout_p=0)")
    if torch.is_grad_enabled():
        for name, t in (("query", query), ("key", key), ("value", value), ("attn_mask", attn_mask)):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                raise ValueError(f"attnforge: {name} requires grad; attnforge computes the forward pass only "
                                 "(run under torch.no_grad() or torch.inference_mode())")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False, *, return_lse=False):
    """torch.nn.functional.scaled_dot_product_attention's arguments and meaning, on attnforge's kernels.

    query (B, Hq, Lq, E), key and value (B, Hkv, Lk, E) of one dtype (float32, bfloat16, float16); attn_mask bool
    (True = takes part) or additive in query's dtype, broadcastable to (B, Hq, Lq, Lk); is_causal top-left; scale
    1/√E when None; enable_gqa for Hq ≠ Hkv. Differences from torch: rows a mask removes entirely are zeros, not
    NaN; return_lse=True also returns the rows' log-sum-exp (B, Hq, Lq) float32, as flex_attention does.
    """
    _refuse_unsupported(query, key, value, attn_mask, dropout_p)
    _check_arguments(query, key, value, attn_mask, is_causal, enable_gqa)
    out, lse = call(query, key, value, attn_mask, bool(is_causal), None if scale is None else float(scale), None,
                    bool(return_lse), False)
    return (out, lse) if return_lse else out


def call(*arguments):
    """torch.ops.attnforge.attention(*arguments) while torch.compile traces; its body, directly, otherwise."""
    if torch.compiler.is_compiling():
        return torch.ops.attnforge.attention(*arguments)
    return _attention(*arguments)
