#!/usr/bin/env python3
"""The flexible-variant peers: masks and score modifiers that FlexAttention was made for (sliding window,
prefix-LM, document masking, ALiBi, soft-cap, relative-position bias, causal + key padding), computed by
FlexAttention, PyTorch SDPA with a dense mask and OpenVINO's SDPA with a dense mask, each on its best path.

Semantics (docs/variants.md, dsl/include/attnforge/dsl/variants/*.hpp; the same as the independent oracle
tests/golden/make_golden.py): q, k, v (B, H, L, 64) float32, scale 1/sqrt(64), softmax over the keys, output
(B, H, L, 64); query i, key j (top-left aligned, Lq = Lk = L here); a query row with no allowed key gives a zero row.
  sliding_window_attention     j <= i and i - j <= 128                         H a run-time size
  prefix_lm_attention          j <= i or j < prefix_length[b]                   + prefix_length (B) int32
  document_attention           j <= i and document_ids[b, i] == document_ids[b, j]   + document_ids (B, L) int32
  alibi_attention              score - slope_h |i - j|, slope_h = 2^(-8(h+1)/8); no mask      H = 8
  softcap_attention            20 tanh(score / 20), then j <= i                 H a run-time size
  relative_position_attention  score + relative_bias[h, clamp(j - i, -128, 128) + 128]        H = 8
                               + relative_bias (8, 257) float32
  mha_causal_padding           x (B, L, 512); wq, wk, wv, wo (512, 512); key_padding_mask (B, L) bool, true = padded;
                               Q = x wq, K = x wk, V = x wv split into 8 heads of 64 (head h = columns 64h..64h+63),
                               j <= i and not key_padding_mask[b, j], heads merged, times wo: (B, L, 512)
reference() is the float64 NumPy reference of these (row-chunked, so that L = 8192 fits in memory).

Each peer's prepare(variant, inputs, threads) builds everything once (tensors, masks, block masks, compiled
kernels, models) and returns a zero-argument callable computing the output (NumPy-convertible); it raises
Unsupported when the peer cannot express the variant (the message says why). Callables may carry `info`, a dict
the grid records (FlexAttention: compile seconds, eager fallback, block-mask density).

Peers:
- FlexAttention: torch.compile(flex_attention, dynamic=False); ALiBi, soft-cap and relative bias as score_mod;
  sliding window, prefix, documents, causal (soft-cap) and causal + padding as mask_mod through a block mask
  (create_block_mask, FlexAttention's 128 x 128 blocks, built in prepare, outside timing). The first call
  (tracing, Inductor's C++ template, the g++ compile) is made in prepare and reported as compile seconds.
  Dynamo's recompile limit is raised (every cell, thread count and mod recompiles; past the limit, 8 by default,
  flex_attention silently runs eagerly, materialising every score) and the fallback is detected (the dynamo
  "hit config.recompile_limit" log record, flex_attention's "called without torch.compile" warning).
- PyTorch SDPA: F.scaled_dot_product_attention (the CPU flash kernel) with a precomputed dense additive float
  mask: 0 / -inf for the boolean masks ((B or 1, 1, L, L), the same pairs as a boolean mask without SDPA's
  per-call bool -> float conversion), the bias itself for ALiBi and relative bias ((1, 8, L, L)). Soft-cap:
  Unsupported (a mask cannot apply tanh to the scores).
- OpenVINO: a plain model with opset13 scaled_dot_product_attention and an attn_mask input (the same additive
  mask), f32 inference precision, INFERENCE_NUM_THREADS (decode_peers.OpenVino.compile). Soft-cap: Unsupported.
mha_causal_padding: the projections are float32 matmuls around the attention core (one fused x [wq wk wv]
product, heads as views), the same for every peer.

Fully masked rows (a batch entry wholly padded): the reference, attnforge, FlexAttention and PyTorch's flash
kernel give zero rows; OpenVINO gives NaN. check() compares only the rows with an allowed key and says what
the fully masked rows hold.

  .venv/bin/python bench/flex_peers.py --check                  # every peer against reference(), small shapes
  .venv/bin/python bench/flex_peers.py --check --attnforge build/tools/attnforge/attnforge   # ours too
"""
import argparse
import atexit
import logging
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

# PyTorch's OpenMP threads spin between calls unless told otherwise (see attention_bench.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode_peers  # noqa: E402  (OpenVINO's compile settings)

E, D, WINDOW, CAP, CLIP = 64, 512, 128, 20.0, 128
SCALE = 1.0 / math.sqrt(E)  # a Python float: dynamo lifts a NumPy scalar as an input, and Inductor then fails
# variant: (heads: None = a run-time size, else fixed; mask: which pairs take part, None = all; modifier of the score)
VARIANTS = {
    "sliding_window_attention": (None, "sliding_window", None),
    "prefix_lm_attention": (None, "prefix", None),
    "document_attention": (None, "document", None),
    "alibi_attention": (8, None, "alibi"),
    "softcap_attention": (None, "causal", "softcap"),
    "relative_position_attention": (8, None, "relative_bias"),
    "mha_causal_padding": (8, "causal_padding", None),
}
INDEX_MASKS = {"prefix", "document", "causal_padding"}  # masks that read an input (they differ per batch entry)


class Unsupported(Exception):
    """The peer has no way to compute this variant (the message says why)."""


# ---- inputs -------------------------------------------------------------------------------------------------
def document_ids(L, documents):
    """(L,) int32 ids: `documents` an int (that many documents of (nearly) equal length) or a list of lengths."""
    if isinstance(documents, int):
        return (np.arange(L) * documents // L).astype(np.int32)
    if sum(documents) != L:
        raise ValueError(f"document lengths {documents} do not add up to L = {L}")
    return np.repeat(np.arange(len(documents)), documents).astype(np.int32)


def make_inputs(variant, B, L, rng, heads=8, documents=4, prefix_length=None, valid_length=None):
    """The variant's inputs by attnforge's names. documents: per batch entry (a list of B) or for all: an int
    (equal documents) or a list of lengths; prefix_length, valid_length (unpadded keys of mha_causal_padding):
    a list of B, default L/4 and 3L/4. softcap_attention: q times 4, so that scores reach the cap."""
    H = VARIANTS[variant][0] or heads
    if variant == "mha_causal_padding":
        w = lambda: (rng.standard_normal((D, D), dtype=np.float32) / np.sqrt(D)).astype(np.float32)
        valid = np.asarray(valid_length if valid_length is not None else [3 * L // 4] * B)
        return {"x": rng.standard_normal((B, L, D), dtype=np.float32), "wq": w(), "wk": w(), "wv": w(), "wo": w(),
                "key_padding_mask": np.arange(L)[None, :] >= valid[:, None]}
    t = {n: rng.standard_normal((B, H, L, E), dtype=np.float32) for n in ("q", "k", "v")}
    if variant == "softcap_attention":
        t["q"] *= 4
    if variant == "prefix_lm_attention":
        t["prefix_length"] = np.asarray(prefix_length if prefix_length is not None else [L // 4] * B, np.int32)
    if variant == "document_attention":
        per_batch = documents if isinstance(documents, list) and isinstance(documents[0], list) else [documents] * B
        t["document_ids"] = np.stack([document_ids(L, d) for d in per_batch])
    if variant == "relative_position_attention":
        t["relative_bias"] = rng.standard_normal((8, 2 * CLIP + 1), dtype=np.float32)
    return t


def sizes(variant, inputs):
    """(B, H, L)"""
    if variant == "mha_causal_padding":
        B, L, _ = inputs["x"].shape
        return B, 8, L
    return inputs["q"].shape[:3]


# ---- the reference ------------------------------------------------------------------------------------------
def allowed(variant, inputs, b, rows=None):
    """(len(rows), L) bool: the pairs (query i in rows, key j) of batch entry b that take part; None: every pair."""
    mask = VARIANTS[variant][1]
    if mask is None:
        return None
    L = sizes(variant, inputs)[2]
    rows = np.arange(L) if rows is None else rows
    i, j = rows[:, None], np.arange(L)[None, :]
    if mask == "sliding_window":
        return (j <= i) & (i - j <= WINDOW)
    if mask == "prefix":
        return (j <= i) | (j < inputs["prefix_length"][b])
    if mask == "document":
        ids = inputs["document_ids"][b]
        return (j <= i) & (ids[rows][:, None] == ids[None, :])
    if mask == "causal":
        return j <= i
    if mask == "causal_padding":
        return (j <= i) & ~inputs["key_padding_mask"][b][None, :]
    raise ValueError(mask)


def modify(variant, inputs, s, rows):
    """The score modifier on s (H, len(rows), L), float64."""
    kind = VARIANTS[variant][2]
    if kind is None:
        return s
    i, j = rows[:, None], np.arange(s.shape[-1])[None, :]
    if kind == "alibi":
        slopes = 2.0 ** (-8.0 * (np.arange(8) + 1) / 8)
        return s - slopes[:, None, None] * np.abs(i - j)
    if kind == "softcap":
        return CAP * np.tanh(s / CAP)
    if kind == "relative_bias":
        table = np.asarray(inputs["relative_bias"], np.float64)
        return s + table[:, np.clip(j - i, -CLIP, CLIP) + CLIP]
    raise ValueError(kind)


def _split_heads(x, H):
    B, L, W = x.shape
    return x.reshape(B, L, H, W // H).transpose(0, 2, 1, 3)


def reference(variant, inputs, chunk=256):
    """float64 reference of the variant's output (see the module docstring), `chunk` query rows at a time."""
    if variant == "mha_causal_padding":
        f = lambda n: np.asarray(inputs[n], np.float64)
        x = f("x")
        q, k, v = (_split_heads(x @ f(w), 8) for w in ("wq", "wk", "wv"))
    else:
        q, k, v = (np.asarray(inputs[n], np.float64) for n in ("q", "k", "v"))
    B, H, L, _ = q.shape
    out = np.zeros_like(q)
    for b in range(B):
        kt = k[b].transpose(0, 2, 1)
        for r0 in range(0, L, chunk):
            r = slice(r0, min(r0 + chunk, L))
            rows = np.arange(r.start, r.stop)
            s = modify(variant, inputs, (q[b, :, r] @ kt) * SCALE, rows)  # (H, rows, L)
            a = allowed(variant, inputs, b, rows)
            if a is not None:
                s = np.where(a[None], s, -np.inf)
            m = s.max(axis=-1, keepdims=True)
            live = np.isfinite(m)
            p = np.where(live, np.exp(s - np.where(live, m, 0.0)), 0.0)
            z = p.sum(axis=-1, keepdims=True)
            out[b, :, r] = (p / np.where(z > 0, z, 1.0)) @ v[b]
    if variant == "mha_causal_padding":
        return out.transpose(0, 2, 1, 3).reshape(B, L, H * E) @ np.asarray(inputs["wo"], np.float64)
    return out


def rows_with_key(variant, inputs):
    """(B, L) bool: the query rows that have at least one allowed key."""
    B, _, L = sizes(variant, inputs)
    if VARIANTS[variant][1] is None:
        return np.ones((B, L), bool)
    return np.stack([allowed(variant, inputs, b).any(axis=1) for b in range(B)])


def live_fraction(variant, inputs, block=64):
    """The fraction of block x block tiles of the (query, key) plane, over the batch, holding any allowed pair:
    the work a kernel that skips dead blocks must do (None for the variants without a mask: all of it)."""
    if VARIANTS[variant][1] is None:
        return None
    B, _, L = sizes(variant, inputs)
    n = -(-L // block)
    live = 0
    for b in range(B):
        a = np.zeros((n * block, n * block), bool)
        a[:L, :L] = allowed(variant, inputs, b)
        live += a.reshape(n, block, n, block).any(axis=(1, 3)).sum()
    return float(live) / (B * n * n)


def check(got, ref, has_key):
    """docs/contract.md §5's bound, as decode_peers.check, over the rows with an allowed key (has_key (B, L));
    fully masked rows are reported (zeros, NaN or other values), not compared."""
    got = np.asarray(got, dtype=np.float64)
    if got.shape != ref.shape:
        return {"max_abs_error": float("inf"), "bound": 0.0, "ok": False, "note": f"shape {got.shape}"}
    sel = has_key[:, None, :] if ref.ndim == 4 else has_key  # (B, 1, L) over (B, H, L, E); (B, L) over (B, L, D)
    sel = np.broadcast_to(sel, ref.shape[:-1])
    diff = np.abs(got[sel] - ref[sel])
    err = float("nan") if np.isnan(diff).any() else float(diff.max(initial=0.0))
    bound = 1e-4 * (1 + float(np.max(np.abs(ref), initial=0.0)))
    c = {"max_abs_error": err, "bound": bound, "ok": bool(err <= bound)}
    dead = got[~sel]
    if dead.size:
        n = int((~sel).sum())
        what = "zeros" if not np.any(dead) else "NaN" if np.isnan(dead).all() else "nonzero values"
        c["note"] = f"{n} fully masked rows (not compared): {what}"
    return c


# ---- dense masks (PyTorch SDPA, OpenVINO) ------------------------------------------------------------------------
_bias_memo = []  # [(variant, the inputs' arrays, bias)]: one bias shared by the peers of a cell (2 GiB at L = 8192)
_flex_memo = []  # [(variant, the inputs' arrays, (score_mod, block_mask))]: FlexAttention's, built once per cell


def _memo(memo, variant, inputs, make):
    """make() once per (variant, the very input arrays); memo keeps the latest entry only."""
    arrays = tuple(inputs.values())
    for v, kept, value in memo:
        if v == variant and len(kept) == len(arrays) and all(a is b for a, b in zip(kept, arrays)):
            return value
    value = make()
    memo[:] = [(variant, arrays, value)]
    return value


def dense_bias(variant, inputs):
    """The additive float32 mask that expresses the variant in SDPA: (B or 1, 1, L, L) 0 / -inf for a mask,
    (1, 8, L, L) the bias for ALiBi and relative bias. Raises Unsupported for soft-cap."""
    return _memo(_bias_memo, variant, inputs, lambda: _dense_bias(variant, inputs))


def _dense_bias(variant, inputs):
    heads, mask, kind = VARIANTS[variant]
    if kind == "softcap":
        raise Unsupported("the soft-cap 20 tanh(score / 20) is a function of the score: no additive mask expresses it")
    B, H, L = sizes(variant, inputs)
    i, j = np.arange(L)[:, None], np.arange(L)[None, :]
    if kind == "alibi":
        slopes = (2.0 ** (-8.0 * (np.arange(8) + 1) / 8)).astype(np.float32)
        bias = (-slopes[:, None, None] * np.abs(i - j).astype(np.float32))[None]
    elif kind == "relative_bias":
        bias = np.ascontiguousarray(inputs["relative_bias"][:, np.clip(j - i, -CLIP, CLIP) + CLIP])[None]
    else:
        per_batch = B if mask in INDEX_MASKS else 1
        bias = np.stack([np.where(allowed(variant, inputs, b), np.float32(0), np.float32(-np.inf))
                         for b in range(per_batch)])[:, None]
    return bias


def release():
    """Drops the dense mask and the block mask kept for the current cell (call between cells: the dense mask is 2 GiB
    for ALiBi at L = 8192)."""
    _bias_memo.clear()
    _flex_memo.clear()


def _weights_qkv(inputs):
    return np.ascontiguousarray(np.concatenate([inputs["wq"], inputs["wk"], inputs["wv"]], axis=1))  # (512, 1536)


# ---- FlexAttention ---------------------------------------------------------------------------------------------
class _FallbackWatch:
    """Collects, while active, the signs that flex_attention ran eagerly instead of compiled: dynamo's
    "hit config.recompile_limit" log record and flex_attention's "called without torch.compile" warning
    (a once-per-process warning: its id is cleared first so that it shows again)."""

    class _Handler(logging.Handler):
        def __init__(self, seen):
            super().__init__(logging.WARNING)
            self.seen = seen

        def emit(self, record):
            msg = record.getMessage()
            if "hit config." in msg or "recompile limit" in msg.lower():
                self.seen.append(msg.splitlines()[0])

    def __init__(self):
        self.seen = []

    def __enter__(self):
        import torch.nn.attention.flex_attention as fa
        getattr(fa, "_WARNINGS_SHOWN", set()).discard("flex_attention_performance")
        self.handler = self._Handler(self.seen)
        logging.getLogger("torch._dynamo").addHandler(self.handler)
        self.warnings = warnings.catch_warnings(record=True)
        self.caught = self.warnings.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self.warnings.__exit__(*exc)
        logging.getLogger("torch._dynamo").removeHandler(self.handler)
        self.seen += [str(w.message).splitlines()[0] for w in self.caught
                      if "without torch.compile" in str(w.message)]
        return False


class Flex:
    """FlexAttention compiled by torch.compile (Inductor's C++ template on CPU). See the module docstring."""

    RECOMPILE_LIMIT = 100000

    def __init__(self):
        # A fresh Inductor cache per process: compile seconds are those of a cold cache (the first compile of a
        # kernel in this process; an identical kernel later in the same process is found in this cache).
        if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
            d = tempfile.mkdtemp(prefix="attnforge-inductor-")
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = d
            atexit.register(shutil.rmtree, d, True)
        import torch
        import torch._dynamo.config as dc
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        self.torch, self.create_block_mask = torch, create_block_mask
        self.version = torch.__version__
        # Each variant, shape, thread count (and closure) adds a cache entry to flex_attention's one code object;
        # past the limit dynamo falls back to eager for good. Both names: the limit was renamed across versions.
        for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                     "accumulated_cache_size_limit"):
            if hasattr(dc, name):
                setattr(dc, name, self.RECOMPILE_LIMIT)
        self.compiled = torch.compile(flex_attention, dynamic=False)

    def name(self, variant):
        return "FlexAttention"

    def mods(self, variant, inputs):
        """(score_mod or None, mask_mod or None, block-mask batch size: B for masks reading inputs, else None)."""
        torch = self.torch
        heads, mask, kind = VARIANTS[variant]
        score_mod = mask_mod = None
        if kind == "alibi":
            slopes = torch.tensor(2.0 ** (-8.0 * (np.arange(8) + 1) / 8), dtype=torch.float32)
            score_mod = lambda score, b, h, q_idx, kv_idx: score - slopes[h] * (q_idx - kv_idx).abs()
        elif kind == "softcap":
            score_mod = lambda score, b, h, q_idx, kv_idx: CAP * torch.tanh(score / CAP)
        elif kind == "relative_bias":
            table = torch.from_numpy(np.ascontiguousarray(inputs["relative_bias"]))
            score_mod = lambda score, b, h, q_idx, kv_idx: score + table[h, (kv_idx - q_idx).clamp(-CLIP, CLIP) + CLIP]
        if mask == "sliding_window":
            mask_mod = lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & (q_idx - kv_idx <= WINDOW)
        elif mask == "prefix":
            prefix = torch.from_numpy(np.ascontiguousarray(inputs["prefix_length"]))
            mask_mod = lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) | (kv_idx < prefix[b])
        elif mask == "document":
            ids = torch.from_numpy(np.ascontiguousarray(inputs["document_ids"]))
            mask_mod = lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & (ids[b, q_idx] == ids[b, kv_idx])
        elif mask == "causal":
            mask_mod = lambda b, h, q_idx, kv_idx: kv_idx <= q_idx
        elif mask == "causal_padding":
            valid = torch.from_numpy(~np.asarray(inputs["key_padding_mask"], bool))
            mask_mod = lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & valid[b, kv_idx]
        return score_mod, mask_mod, (sizes(variant, inputs)[0] if mask in INDEX_MASKS else None)

    def prepare(self, variant, inputs, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        B, H, L = sizes(variant, inputs)

        def build():  # once per cell (every thread count uses it): the mods and the block mask
            score_mod, mask_mod, mask_batch = self.mods(variant, inputs)
            return score_mod, None if mask_mod is None else self.create_block_mask(mask_mod, mask_batch, None, L, L,
                                                                                  device="cpu")
        score_mod, block_mask = _memo(_flex_memo, variant, inputs, build)
        flex = self.compiled

        def attend(q, k, v):
            return flex(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=SCALE)
        if variant == "mha_causal_padding":
            x, wo = torch.from_numpy(inputs["x"]), torch.from_numpy(inputs["wo"])
            wqkv = torch.from_numpy(_weights_qkv(inputs))

            def call():
                with torch.no_grad():
                    qkv = (x @ wqkv).view(B, L, 3, H, E).permute(2, 0, 3, 1, 4)  # views (B, H, L, E)
                    return attend(qkv[0], qkv[1], qkv[2]).transpose(1, 2).reshape(B, L, H * E) @ wo
        else:
            q, k, v = (torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in ("q", "k", "v"))

            def call():
                with torch.no_grad():
                    return attend(q, k, v)
        with _FallbackWatch() as watch:
            t0 = time.perf_counter()
            call()  # compiles
            compile_s = time.perf_counter() - t0
            call()  # a second call: a fallback may show only once the cache entry is looked up again
        density = None if block_mask is None else 1 - block_mask.sparsity() / 100
        call.info = {"compile_s": compile_s, "fallback": "; ".join(watch.seen) or None,
                     "block_mask_density": density}
        call.keep = (block_mask,)
        return call


# ---- PyTorch SDPA with a dense mask ---------------------------------------------------------------------------------
class TorchSdpa:
    """F.scaled_dot_product_attention with the precomputed dense additive mask of dense_bias()."""

    def __init__(self):
        import torch
        self.torch = torch
        self.version = torch.__version__

    def name(self, variant):
        return "PyTorch SDPA (dense mask)"

    def prepare(self, variant, inputs, threads):
        torch, F = self.torch, self.torch.nn.functional
        torch.set_num_threads(threads)
        mask = torch.from_numpy(dense_bias(variant, inputs))
        B, H, L = sizes(variant, inputs)
        if variant == "mha_causal_padding":
            x, wo = torch.from_numpy(inputs["x"]), torch.from_numpy(inputs["wo"])
            wqkv = torch.from_numpy(_weights_qkv(inputs))

            def call():
                with torch.inference_mode():
                    qkv = (x @ wqkv).view(B, L, 3, H, E).permute(2, 0, 3, 1, 4)
                    o = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=mask, scale=SCALE)
                    return o.transpose(1, 2).reshape(B, L, H * E) @ wo
            return call
        q, k, v = (torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in ("q", "k", "v"))

        def call():
            with torch.inference_mode():
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=SCALE)
        return call


# ---- OpenVINO SDPA with a dense mask --------------------------------------------------------------------------------
class OpenVino:
    """A plain OpenVINO model, opset13 scaled_dot_product_attention(q, k, v, attn_mask) with the mask of dense_bias()
    as an input (for mha_causal_padding: x an input, the weights constants, MatMul / Reshape / Transpose around it),
    static shapes, compiled with decode_peers.OpenVino.compile (f32 precision, INFERENCE_NUM_THREADS, latency hint,
    one stream). The CPU plugin decomposes it (MatMul / Softmax / MatMul subgraph; `info` lists the layer types):
    fully masked rows come out NaN."""

    def __init__(self):
        self.base = decode_peers.OpenVino()
        self.ov, self.version = self.base.ov, self.base.version

    def name(self, variant):
        return "OpenVINO SDPA (dense mask)"

    def model(self, variant, inputs, bias):
        import openvino.opset13 as ops
        ov = self.ov
        f32 = ov.Type.f32
        B, H, L = sizes(variant, inputs)
        mask = ops.parameter(list(bias.shape), f32, name="mask")
        if variant == "mha_causal_padding":
            x = ops.parameter([B, L, D], f32, name="x")
            qkv = ops.matmul(x, ops.constant(_weights_qkv(inputs)), False, False)  # (B, L, 1536)
            qkv = ops.transpose(ops.reshape(qkv, ops.constant(np.array([B, L, 3, H, E], np.int64)), False),
                                ops.constant(np.array([2, 0, 3, 1, 4], np.int64)))  # (3, B, H, L, E)
            q, k, v = (ops.squeeze(s, ops.constant(np.array([0], np.int64)))
                       for s in ops.split(qkv, ops.constant(np.int64(0)), 3).outputs())
            o = ops.scaled_dot_product_attention(q, k, v, mask, causal=False)
            o = ops.reshape(ops.transpose(o, ops.constant(np.array([0, 2, 1, 3], np.int64))),
                            ops.constant(np.array([B, L, H * E], np.int64)), False)
            y = ops.matmul(o, ops.constant(np.ascontiguousarray(inputs["wo"])), False, False)
            params = [x, mask]
        else:
            q, k, v = (ops.parameter([B, H, L, E], f32, name=n) for n in ("q", "k", "v"))
            y = ops.scaled_dot_product_attention(q, k, v, mask, causal=False)
            params = [q, k, v, mask]
        return ov.Model([y.output(0)], params, variant)

    def prepare(self, variant, inputs, threads):
        bias = dense_bias(variant, inputs)
        compiled = self.base.compile(self.model(variant, inputs, bias), threads)
        req = compiled.create_infer_request()
        names = ("x",) if variant == "mha_causal_padding" else ("q", "k", "v")
        feed = {n: np.ascontiguousarray(inputs[n]) for n in names}
        feed["mask"] = bias

        def call():
            return req.infer(feed, share_inputs=True)[0]
        layers = self.base.layer_types(compiled)
        call.info = {"layers": sorted(set(layers) - {"Input", "Output", "Parameter", "Result", "Constant"})}
        call.keep = (compiled, feed)
        return call


def peers(quiet=False):
    """Every flex peer whose package imports; a message on stderr for each that does not."""
    found = []
    for cls in (Flex, TorchSdpa, OpenVino):
        try:
            found.append(cls())
        except ImportError as e:
            if not quiet:
                print(f"[flex] {cls.__name__} left out: {e}", file=sys.stderr)
    return found


def to_numpy(x):
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


# ---- --check ------------------------------------------------------------------------------------------------------
CHECK_B, CHECK_L = 2, 200  # L not a multiple of the 64 or 128 blocks; index inputs differ between the two entries
CHECK_CASES = {
    "document_attention": {"documents": [[50, 50, 50, 50], [1, 60, 139]]},
    "prefix_lm_attention": {"prefix_length": [50, CHECK_L]},
    "mha_causal_padding": {"valid_length": [150, 0]},  # the second entry wholly padded: every row fully masked
}


def ours_output(exe, variant, inputs, tmp):
    """attnforge run on the inputs (saved as .npy under tmp); float64."""
    args = [exe, "run", variant, "--threads", "1", "--output", os.path.join(tmp, "ours.npy")]
    for n, a in inputs.items():
        np.save(os.path.join(tmp, n + ".npy"), a)
        args += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
    subprocess.run(args, capture_output=True, text=True, check=True)
    return np.load(os.path.join(tmp, "ours.npy")).astype(np.float64)


def self_check(found, exe=None, heads=3):
    """Every peer (and attnforge with exe) against reference() at B = 2, L = 200, 1 thread; False if any fails."""
    rng = np.random.default_rng(0)
    ok = True
    print(f"check: B={CHECK_B} L={CHECK_L} H={heads} (8 where fixed), 1 thread; bound 1e-4(1 + max|ref|) over the "
          "rows with an allowed key")
    for variant in VARIANTS:
        inputs = make_inputs(variant, CHECK_B, CHECK_L, rng, heads=heads, **CHECK_CASES.get(variant, {}))
        ref, has_key = reference(variant, inputs), rows_with_key(variant, inputs)
        outputs = []
        if exe:
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    outputs.append(("attnforge", ours_output(exe, variant, inputs, tmp), ""))
            except (OSError, subprocess.CalledProcessError) as e:
                ok = False
                print(f"  {variant:28} {'attnforge':28} FAILED: {(getattr(e, 'stderr', '') or str(e)).strip()[:200]}")
        for p in found:
            try:
                call = p.prepare(variant, inputs, 1)
            except Unsupported as e:
                outputs.append((p.name(variant), None, f"unsupported: {e}"))
                continue
            info = getattr(call, "info", {})
            extra = ""
            if "compile_s" in info:
                extra = f"  compile {info['compile_s']:.1f} s" + (f", FELL BACK TO EAGER: {info['fallback']}"
                                                                  if info["fallback"] else ", no fallback")
            if "layers" in info:
                extra = f"  layers {','.join(info['layers'])}"
            outputs.append((p.name(variant), to_numpy(call()).copy(), extra))
            ok &= not info.get("fallback")
            del call
        for name, out, extra in outputs:
            if out is None:
                print(f"  {variant:28} {name:28} {extra}")
                continue
            c = check(out, ref, has_key)
            ok &= c["ok"]
            note = f" ({c['note']})" if "note" in c else ""
            print(f"  {variant:28} {name:28} {'ok' if c['ok'] else 'FAILED'} err {c['max_abs_error']:.1e} "
                  f"(bound {c['bound']:.1e}){note}{extra}", flush=True)
    return ok


def fallback_demo(flex):
    """The pitfall, shown and detected: with the recompile limit at its default (8) and the cache entries of the
    check above, a new mask makes dynamo run flex_attention eagerly. Returns True if the watch saw it."""
    import torch._dynamo.config as dc
    saved = {n: getattr(dc, n) for n in ("recompile_limit", "accumulated_recompile_limit") if hasattr(dc, n)}
    try:
        for n in saved:
            setattr(dc, n, 8 if n == "recompile_limit" else 256)
        rng = np.random.default_rng(1)
        for L in (72, 80, 88, 96):  # new shapes: new cache entries, past the limit of 8
            inputs = make_inputs("sliding_window_attention", 1, L, rng, heads=2)
            info = flex.prepare("sliding_window_attention", inputs, 1).info
            if info["fallback"]:
                print(f"fallback demo (recompile limit 8): detected at L={L}: {info['fallback'][:160]}")
                return True
        print("fallback demo (recompile limit 8): no fallback seen")
        return False
    finally:
        for n, v in saved.items():
            setattr(dc, n, v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="every peer against the reference, small shapes, 1 thread")
    ap.add_argument("--attnforge", help="with --check: also check `attnforge run` (this executable)")
    ap.add_argument("--no-fallback-demo", action="store_true",
                    help="with --check: leave out the demonstration that the eager fallback is detected")
    a = ap.parse_args()
    if not a.check:
        ap.print_help()
        return 2
    import torch
    torch.set_num_threads(1)
    found = peers()
    for p in found:
        print(f"{type(p).__name__} {p.version}")
    ok = self_check(found, a.attnforge)
    flex = next((p for p in found if isinstance(p, Flex)), None)
    if flex and not a.no_fallback_demo:
        ok &= fallback_demo(flex)
    print("check: all supported cases ok" if ok else "check: FAILURES above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
