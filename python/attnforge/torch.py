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

from typing import Optional

import torch

from . import _native

__all__ = ["scaled_dot_product_attention", "attention"]


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: Optional[torch.Tensor],
               is_causal: bool, scale: Optional[float], softcap: Optional[float], enable_gqa: bool, return_lse: bool,
               heads_last: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of (B, Hq, Lq, E) queries over (B, Hkv, Lk, E) keys and values (Hq a multiple of Hkv).

    attn_mask: None, bool (True = the pair takes part) or additive float, broadcastable to (B, Hq, Lq, Lk);
    is_causal: top-left, as torch's; softcap: cap · tanh(score / cap) before the mask (Gemma-2).
    Returns (output, lse): output (B, Hq, Lq, E), or (B, Lq, Hq, E) when heads_last (the layout a model reshapes
    to (B, Lq, Hq·E)); lse the natural log-sum-exp of each row's scaled scores (B, Hq, Lq) float32 when
    return_lse, else an empty tensor. Rows the mask removes entirely give zeros (torch gives NaN).

    The work is the extension's (python/src/torch_attention.cpp): torch's checks, the built-in variant for the
    arguments (docs/pytorch.md), for a bool mask and Lq ≤ 16 only the keys up to the last kept one (a static
    cache's empty slots unread; a mask keeping every pair left at Lq = 1 is the plain decode kernel), one call."""
    out, lse = _native.torch_attention(query, key, value, attn_mask, is_causal, scale, softcap, enable_gqa,
                                       return_lse, heads_last)
    return out, (torch.empty((0,), dtype=torch.float32) if lse is None else lse)


# The operator torch.compile sees (its body: _attention). Eager callers below call the body directly, which saves
# the dispatcher's round trip through Python (~70 µs a call, measured on Zen 4); a compiled graph calls the operator.
attention = torch.library.custom_op("attnforge::attention", _attention, mutates_args=())


@attention.register_fake
def _(query, key, value, attn_mask, is_causal, scale, softcap, enable_gqa, return_lse, heads_last):
    B, Hq, Lq, E = query.shape
    out_shape = (B, Lq, Hq, E) if heads_last else (B, Hq, Lq, E)
    lse_shape = (B, Hq, Lq) if return_lse else (0,)
    return query.new_empty(out_shape), query.new_empty(lse_shape, dtype=torch.float32)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False, *, return_lse=False):
    """torch.nn.functional.scaled_dot_product_attention's arguments and meaning, on attnforge's kernels.

    query (B, Hq, Lq, E), key and value (B, Hkv, Lk, E) of one dtype (float32, bfloat16, float16); attn_mask bool
    (True = takes part) or additive in query's dtype, broadcastable to (B, Hq, Lq, Lk); is_causal top-left; scale
    1/√E when None; enable_gqa for Hq ≠ Hkv. Differences from torch: rows a mask removes entirely are zeros, not
    NaN; return_lse=True also returns the rows' log-sum-exp (B, Hq, Lq) float32, as flex_attention does.
    """
    if dropout_p:
        raise ValueError(f"attnforge: dropout_p = {dropout_p} is not supported (inference kernels: dropout_p=0)")
    out, lse = call(query, key, value, attn_mask, bool(is_causal), None if scale is None else float(scale), None,
                    bool(enable_gqa), bool(return_lse), False)
    return (out, lse) if return_lse else out


def call(*arguments):
    """torch.ops.attnforge.attention(*arguments) while torch.compile traces; the extension's body directly otherwise
    (its lse None where not asked for)."""
    if torch.compiler.is_compiling():
        return torch.ops.attnforge.attention(*arguments)
    return _native.torch_attention(*arguments)
