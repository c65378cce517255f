#!/usr/bin/env python3
"""Independent float64 NumPy oracle for every built-in attnforge variant.

Writes tests/golden/data/<variant>/<case>/: the inputs as .npy files (float32 '<f4', bool '|b1', int32 '<i4'
for index inputs: document ids, prefix and cache lengths), the
expected output (float64 '<f8') and, for small cases, the expected attention weights (float64), plus a
manifest `case.txt` that maps every input name to its file. The D = 512 weights are shared by all
cases (data/weights512/) to keep the repository small.

This oracle is written from the public contract (docs/contract.md) alone, in plain NumPy; it shares no code with the C++
interpreter. Inputs are multiples of 1/64 (activations) and 1/256 (weights), exactly representable in
float32, so float32 inputs and the float64 oracle see the same numbers.

Regenerate (only when the contract or the cases change):
    .venv/bin/python tests/golden/make_golden.py
"""
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
MAX_WEIGHTS_STORED = 20000  # elements; larger attention-weight tensors are not stored
rng = np.random.default_rng(20261122)


# ---- inputs -------------------------------------------------------------------------------------
ACTIVATION_SPAN = [64]  # the default span of act(); large-logit cases widen it (see large_logits)


def act(*shape, scale=64, span=None):
    span = ACTIVATION_SPAN[0] if span is None else span
    return (rng.integers(-span, span + 1, size=shape) / scale).astype(np.float32)


def large_logits(times, make):
    """A case whose default-span inputs reach ±times (multiples of 1/64, not integers): logits of 10³–10⁴."""
    def made():
        ACTIVATION_SPAN[0] = 64 * times
        try:
            return make()
        finally:
            ACTIVATION_SPAN[0] = 64
    return made


def mat(*shape):
    return (rng.integers(-64, 65, size=shape) / 256).astype(np.float32)


# ---- the oracle ---------------------------------------------------------------------------------
def softmax_rows(s):
    """Softmax over the last axis; rows whose entries are all -inf give zeros."""
    m = s.max(axis=-1, keepdims=True)
    finite = np.isfinite(m)
    e = np.where(finite, np.exp(s - np.where(finite, m, 0.0)), 0.0)
    z = e.sum(axis=-1, keepdims=True)
    return np.where(z > 0, e / np.where(z > 0, z, 1.0), 0.0)


def attend(q, k, v, allowed=None, modifier=None, scale=None, bias=None):
    """q (B, Hq, Lq, E), k/v (B, Hkv, Lk, E); allowed (B or 1, Hq or 1, Lq, Lk) bool; bias the same shapes, float,
    added to the scaled scores (PyTorch's float attn_mask, -inf removing the pair)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    hq, hkv = q.shape[1], k.shape[1]
    k = np.repeat(k, hq // hkv, axis=1)  # query head h reads kv head h // (Hq/Hkv)
    v = np.repeat(v, hq // hkv, axis=1)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = np.einsum("bhie,bhje->bhij", q, k) * scale
    if modifier is not None:
        b, h, i, j = np.meshgrid(*(np.arange(n) for n in s.shape), indexing="ij")
        s = modifier(s, b, h, i, j)
    if bias is not None:
        s = s + np.asarray(bias, np.float64)
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    p = softmax_rows(s)
    return np.einsum("bhij,bhje->bhie", p, v), p


def causal(lq, lk):
    return np.tril(np.ones((lq, lk), dtype=bool))  # top-left aligned: key j <= query i


def split(x, h):
    b, l, d = x.shape
    return x.reshape(b, l, h, d // h).transpose(0, 2, 1, 3)


def merge(o):
    b, h, l, e = o.shape
    return o.transpose(0, 2, 1, 3).reshape(b, l, h * e)


def mha(xq, xkv, w, hq=8, hkv=8, allowed=None, bias=None):
    f = lambda a: np.asarray(a, np.float64)
    b = {n: f(bias[n]) if bias else 0.0 for n in ("bq", "bk", "bv", "bo")}
    q = split(f(xq) @ f(w["wq"]) + b["bq"], hq)
    k = split(f(xkv) @ f(w["wk"]) + b["bk"], hkv)
    v = split(f(xkv) @ f(w["wv"]) + b["bv"], hkv)
    o, p = attend(q, k, v, allowed)
    return merge(o) @ f(w["wo"]) + b["bo"], p


def layer_norm(x, gamma, beta, eps=1e-5):
    x = np.asarray(x, np.float64)
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def positional_encoding(length, d):
    """Seed 001 §4."""
    pos = np.arange(length)[:, None]
    div = np.exp(np.arange(0, d, 2) * -(np.log(10000.0) / d))
    pe = np.zeros((length, d))
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div)
    return pe


# ---- cases --------------------------------------------------------------------------------------
W512 = {"wq": mat(512, 512), "wk": mat(512, 512), "wv": mat(512, 512), "wo": mat(512, 512),
        "wk128": mat(512, 128), "wv128": mat(512, 128),
        "gamma": (1 + act(512, scale=256)).astype(np.float32), "beta": act(512, scale=256)}
# Derived without drawing from rng, so that every earlier case keeps its numbers.
W512["wk64"], W512["wv64"] = W512["wk128"][:, :64].copy(), W512["wv128"][:, 64:].copy()
W512_FILE = {name: f"../../weights512/{name}.npy" for name in W512}


def sdpa_inputs(b, h, lq, lk, qscale=64, hkv=None):
    hkv = h if hkv is None else hkv
    return {"q": act(b, h, lq, 64, scale=qscale), "k": act(b, hkv, lk, 64), "v": act(b, hkv, lk, 64)}


def case_seed_attention(l, large=False):
    """large: x of the default span (under large_logits), weights as always: logits of ~10³."""
    x = act(l, 4) if large else act(l, 4, scale=4, span=8)
    wq, wk, wv = act(4, 3, scale=4, span=8), act(4, 3, scale=4, span=8), act(4, 3, scale=4, span=8)
    q, k, v = (np.asarray(x, np.float64)[None, None] @ w for w in (wq, wk, wv))
    o, p = attend(q, k, v)
    return {"x": x, "wq": wq, "wk": wk, "wv": wv}, {}, o[0, 0], p  # weights (B, Hq, L, L) with B = 1


def case_sdpa(b, h, lq, lk, is_causal=False, hkv=None, scale=None):
    """scale: given as the optional 0-d input `scale` (float32); None: not given, 1/sqrt(E)."""
    t = sdpa_inputs(b, h, lq, lk, hkv=hkv)
    o, p = attend(t["q"], t["k"], t["v"], causal(lq, lk) if is_causal else None,
                  scale=None if scale is None else float(np.float32(scale)))
    if scale is not None:
        t["scale"] = np.array(scale, dtype=np.float32)
    return t, {}, o, p


def case_mha(b, l, is_causal=False):
    x = act(b, l, 512)
    y, p = mha(x, x, W512, allowed=causal(l, l) if is_causal else None)
    return {"x": x}, {n: W512_FILE[n] for n in ("wq", "wk", "wv", "wo")}, y, p


def case_mha_padding(b, l, lengths, is_causal=False):
    x = act(b, l, 512)
    padded = np.array([[j >= n for j in range(l)] for n in lengths], dtype=bool)  # True = padded key
    allowed = ~padded[:, None, None, :]
    if is_causal:
        allowed = allowed & causal(l, l)
    y, p = mha(x, x, W512, allowed=allowed)
    return {"x": x, "key_padding_mask": padded}, {n: W512_FILE[n] for n in ("wq", "wk", "wv", "wo")}, y, p


def case_mha_bias(b, l):
    x = act(b, l, 512)
    bias = {n: act(512, scale=8, span=64) for n in ("bq", "bk", "bv", "bo")}  # ±8 also under large_logits
    y, p = mha(x, x, W512, bias=bias)
    return dict({"x": x}, **bias), {n: W512_FILE[n] for n in ("wq", "wk", "wv", "wo")}, y, p


def case_cross(b, lq, lk):
    x, memory = act(b, lq, 512), act(b, lk, 512)
    y, p = mha(x, memory, W512)
    return {"x": x, "memory": memory}, {n: W512_FILE[n] for n in ("wq", "wk", "wv", "wo")}, y, p


def case_grouped(b, l, hkv):
    """GQA (hkv = 2) and MQA (hkv = 1): 8 query heads share hkv key/value heads of width 64."""
    x = act(b, l, 512)
    wk, wv = f"wk{64 * hkv}", f"wv{64 * hkv}"
    y, p = mha(x, x, dict(W512, wk=W512[wk], wv=W512[wv]), hq=8, hkv=hkv)
    return {"x": x}, {"wq": W512_FILE["wq"], "wk": W512_FILE[wk], "wv": W512_FILE[wv], "wo": W512_FILE["wo"]}, y, p


def case_self_attention_layer(b, l, with_positions=False, gamma_times=None):
    """gamma_times: LayerNorm's gamma that many times the shared one, as an input of the case (the
    LayerNorm undoes x's scale: large logits need a large gamma)."""
    x = act(b, l, 512)
    h = np.asarray(x, np.float64) + (positional_encoding(l, 512) if with_positions else 0.0)
    gamma = W512["gamma"] if gamma_times is None else (W512["gamma"] * gamma_times).astype(np.float32)
    n = layer_norm(h, gamma, W512["beta"])
    y, p = mha(n, n, W512)
    shared = {n_: W512_FILE[n_] for n_ in ("gamma", "beta", "wq", "wk", "wv", "wo")}
    inputs = {"x": x}
    if gamma_times is not None:
        inputs["gamma"] = gamma
        del shared["gamma"]
    return inputs, shared, h + y, p


# The window, the slopes and the cap: the variant's default where `given` is False, else inputs of the case.
def case_sliding_window(b, h, l, window=128, given=False):
    t = sdpa_inputs(b, h, l, l)
    i, j = np.arange(l)[:, None], np.arange(l)[None, :]
    o, p = attend(t["q"], t["k"], t["v"], (i >= j) & (i - j <= window))
    if given:
        t["window"] = np.array(window, dtype=np.int32)
    return t, {}, o, p


def case_alibi(b, lq, lk, h=8, slopes=None):
    t = sdpa_inputs(b, h, lq, lk)
    given = slopes is not None
    slopes = np.asarray(slopes, np.float32) if given else 2.0 ** (-8.0 * (np.arange(h) + 1) / h)
    o, p = attend(t["q"], t["k"], t["v"], modifier=lambda s, b_, hh, i, j: s - slopes[hh].astype(np.float64) * np.abs(i - j))
    if given:
        t["slopes"] = slopes
    return t, {}, o, p


def case_softcap(b, h, lq, lk, cap=20.0, given=False, window=None, hkv=None):
    """window: keys at most that far back from the query's (top-left) position, an input
    (softcap_sliding_window_attention: Gemma-2's local layers); None: softcap_attention's causal mask alone."""
    t = sdpa_inputs(b, h, lq, lk, qscale=4, hkv=hkv)  # large scores, so that the cap matters
    allowed = causal(lq, lk)
    if window is not None:
        i, j = np.arange(lq)[:, None], np.arange(lk)[None, :]
        allowed = allowed & (i - j <= window)
        t["window"] = np.array(window, dtype=np.int32)
    o, p = attend(t["q"], t["k"], t["v"], allowed, modifier=lambda s, *_: cap * np.tanh(s / cap))
    if given:
        t["cap"] = np.array(cap, dtype=np.float32)
    return t, {}, o, p


def case_masked(b, h, lq, lk):
    t = sdpa_inputs(b, h, lq, lk)
    keep = rng.random((b, lq, lk)) < 0.6
    keep[0, 1, :] = False  # one fully masked query row
    o, p = attend(t["q"], t["k"], t["v"], keep[:, None])
    return dict(t, attn_mask=keep), {}, o, p


def rope(x, base=10000.0, offsets=None):
    """Rotary embedding, rotate-half pairing: column i with i + E/2, angle pos * base^(-2i/E); pos is the
    row index, or offsets[b] + row index (a cache's newest rows: offsets = kv_length - L)."""
    x = np.asarray(x, np.float64)
    length, e = x.shape[-2], x.shape[-1]
    half = e // 2
    pos = np.arange(length)[:, None]
    if offsets is not None:
        pos = (np.asarray(offsets)[:, None, None, None] + np.arange(length)[None, None, :, None])  # (B, 1, L, 1)
    angle = pos * base ** (-2.0 * np.arange(half) / e)
    c, s_ = np.cos(angle), np.sin(angle)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * c - x2 * s_, x2 * c + x1 * s_], axis=-1)


def case_prefix_lm(b, h, l, prefix_lengths):
    t = sdpa_inputs(b, h, l, l)
    prefix = np.array(prefix_lengths, dtype=np.int32)
    i, j = np.arange(l)[:, None], np.arange(l)[None, :]
    allowed = (j <= i)[None, None] | (j[None, None] < prefix[:, None, None, None])
    o, p = attend(t["q"], t["k"], t["v"], allowed)
    return dict(t, prefix_length=prefix), {}, o, p


def case_document(b, h, documents):
    """documents: per batch entry, the lengths of the documents packed into it (equal totals)."""
    l = sum(documents[0])
    t = sdpa_inputs(b, h, l, l)
    ids = np.array([np.repeat(np.arange(len(d)), d) for d in documents], dtype=np.int32)
    same = ids[:, :, None] == ids[:, None, :]
    o, p = attend(t["q"], t["k"], t["v"], (same & causal(l, l)[None])[:, None])
    return dict(t, document_ids=ids), {}, o, p


def case_relative_bias(b, lq, lk, clip=128):
    t = sdpa_inputs(b, 8, lq, lk)
    table = act(8, 2 * clip + 1, scale=16)
    o, p = attend(t["q"], t["k"], t["v"],
                  modifier=lambda s, b_, h, i, j: s + np.asarray(table, np.float64)[h, np.clip(j - i, -clip, clip) + clip])
    return dict(t, relative_bias=table), {}, o, p


def case_rope(b, h, lq, lk):
    t = sdpa_inputs(b, h, lq, lk)
    o, p = attend(rope(t["q"]), rope(t["k"]), t["v"], causal(lq, lk))
    return t, {}, o, p


def case_decoder_layer(b, lq, lk, memory_lengths, gamma_times=None):
    """gamma_times: both LayerNorms' gamma that many times larger (large logits)."""
    x, memory = act(b, lq, 512), act(b, lk, 512)
    ln2_gamma, ln2_beta = (1 + act(512, scale=256, span=64)).astype(np.float32), act(512, scale=256, span=64)
    ln1_gamma = W512["gamma"]
    if gamma_times is not None:
        ln1_gamma, ln2_gamma = ((g * gamma_times).astype(np.float32) for g in (W512["gamma"], ln2_gamma))
    padded = np.array([[j >= n for j in range(lk)] for n in memory_lengths], dtype=bool)
    cross = {"wq": W512["wv"], "wk": W512["wq"], "wv": W512["wo"], "wo": W512["wk"]}  # other weights than self's
    n1 = layer_norm(x, ln1_gamma, W512["beta"])
    y1, p = mha(n1, n1, W512, allowed=causal(lq, lq))
    h_ = np.asarray(x, np.float64) + y1
    n2 = layer_norm(h_, ln2_gamma, ln2_beta)
    y2, _ = mha(n2, memory, cross, allowed=~padded[:, None, None, :])
    shared = {"ln1_gamma": W512_FILE["gamma"], "ln1_beta": W512_FILE["beta"],
              "wq": W512_FILE["wq"], "wk": W512_FILE["wk"], "wv": W512_FILE["wv"], "wo": W512_FILE["wo"],
              "cross_wq": W512_FILE["wv"], "cross_wk": W512_FILE["wq"], "cross_wv": W512_FILE["wo"],
              "cross_wo": W512_FILE["wk"]}
    inputs = {"x": x, "memory": memory, "memory_padding_mask": padded, "ln2_gamma": ln2_gamma, "ln2_beta": ln2_beta}
    if gamma_times is not None:
        inputs["ln1_gamma"] = ln1_gamma
        del shared["ln1_gamma"]
    return inputs, shared, h_ + y2, p


def decode_allowed(kv_length, lq, lmax, window=None):
    """A cache (contract §1): keys j < kv_length[b]; query i at position kv_length[b] - Lq + i sees j <= it
    (bottom-right causal), and with a window only j >= position - window."""
    n = np.asarray(kv_length)[:, None, None]
    pos = n - lq + np.arange(lq)[None, :, None]
    j = np.arange(lmax)[None, None, :]
    allowed = (j < n) & (j <= pos)
    if window is not None:
        allowed &= pos - j <= window
    return allowed[:, None]  # (B, 1, Lq, Lmax)


def case_decode(h, lq, lmax, kv_length, hkv=None, e=64, window=None, rotate=False, cap=None, given=False):
    """cap: scores soft-capped, cap·tanh(s/cap); given: the window and the cap passed as inputs (else the
    variant's defaults are what the reference assumes)."""
    b = len(kv_length)
    hkv = h if hkv is None else hkv
    t = {"q": act(b, h, lq, e), "k": act(b, hkv, lmax, e), "v": act(b, hkv, lmax, e)}
    q = rope(t["q"], offsets=np.asarray(kv_length) - lq) if rotate else t["q"]  # queries at their cache positions
    modifier = None if cap is None else (lambda s, *_: cap * np.tanh(s / cap))
    o, p = attend(q, t["k"], t["v"], decode_allowed(kv_length, lq, lmax, window), modifier=modifier)
    if given and window is not None:
        t["window"] = np.array(window, dtype=np.int32)
    if given and cap is not None:
        t["cap"] = np.array(cap, dtype=np.float32)
    return dict(t, kv_length=np.array(kv_length, dtype=np.int32)), {}, o, p


CASES = {
    "seed_attention": {"L3": lambda: case_seed_attention(3), "L7": lambda: case_seed_attention(7)},
    "sdpa": {"B1_H2_L5": lambda: case_sdpa(1, 2, 5, 5), "B2_H3_Lq7_Lk11": lambda: case_sdpa(2, 3, 7, 11)},
    "sdpa_causal": {"B1_H2_L6": lambda: case_sdpa(1, 2, 6, 6, True),
                    "B2_H3_Lq9_Lk5": lambda: case_sdpa(2, 3, 9, 5, True)},
    "mha": {"B1_L4": lambda: case_mha(1, 4), "B2_L9": lambda: case_mha(2, 9)},
    "mha_causal": {"B1_L5": lambda: case_mha(1, 5, True), "B2_L8": lambda: case_mha(2, 8, True)},
    "mha_padding": {"B2_L6": lambda: case_mha_padding(2, 6, [4, 0]), "B3_L5": lambda: case_mha_padding(3, 5, [5, 1, 3])},
    "cross_attention": {"B1_Lq3_Lk8": lambda: case_cross(1, 3, 8), "B2_Lq6_Lk4": lambda: case_cross(2, 6, 4)},
    "gqa": {"B1_L5": lambda: case_grouped(1, 5, 2), "B2_L7": lambda: case_grouped(2, 7, 2)},
    "self_attention_layer": {"B1_L4": lambda: case_self_attention_layer(1, 4),
                             "B2_L6": lambda: case_self_attention_layer(2, 6)},
    "sliding_window_attention": {"B1_H2_L9": lambda: case_sliding_window(1, 2, 9),
                                 "B1_H2_L200": lambda: case_sliding_window(1, 2, 200)},
    "alibi_attention": {"B1_L6": lambda: case_alibi(1, 6, 6), "B2_Lq5_Lk9": lambda: case_alibi(2, 5, 9)},
    "softcap_attention": {"B1_H2_L6": lambda: case_softcap(1, 2, 6, 6),
                          "B2_H2_Lq7_Lk9": lambda: case_softcap(2, 2, 7, 9)},
    "masked_attention": {"B1_H2_Lq5_Lk6": lambda: case_masked(1, 2, 5, 6),
                         "B2_H3_L4": lambda: case_masked(2, 3, 4, 4)},
    "positional_self_attention_layer": {"B1_L5": lambda: case_self_attention_layer(1, 5, True),
                                        "B2_L3": lambda: case_self_attention_layer(2, 3, True)},
    "mqa": {"B1_L5": lambda: case_grouped(1, 5, 1), "B2_L7": lambda: case_grouped(2, 7, 1)},
    "prefix_lm_attention": {"B2_H2_L7": lambda: case_prefix_lm(2, 2, 7, [3, 0]),
                            "B3_H1_L9": lambda: case_prefix_lm(3, 1, 9, [9, 1, 5])},
    "document_attention": {"B1_H2_L8": lambda: case_document(1, 2, [[3, 5]]),
                           "B2_H2_L10": lambda: case_document(2, 2, [[1, 4, 5], [10]])},
    "relative_position_attention": {"B1_L6": lambda: case_relative_bias(1, 6, 6),
                                    "B1_Lq5_Lk300": lambda: case_relative_bias(1, 5, 300)},
    "rope_attention": {"B1_H2_L6": lambda: case_rope(1, 2, 6, 6), "B2_H3_Lq9_Lk40": lambda: case_rope(2, 3, 9, 40)},
    "decoder_layer": {"B1_Lq4_Lk6": lambda: case_decoder_layer(1, 4, 6, [6]),
                      "B2_Lq5_Lk3": lambda: case_decoder_layer(2, 5, 3, [2, 0])},
    # Caches: full (kv_length = Lmax), empty (0: zero rows), shorter than Lq (the first queries see
    # nothing), mixed lengths in one batch, Lq = 1 and 4, several key tiles (Lmax = 300).
    "decode": {"B3_H2_Lq1_L20": lambda: case_decode(2, 1, 20, [20, 0, 7]),
               "B3_H2_Lq4_L20": lambda: case_decode(2, 4, 20, [4, 20, 2]),
               "B2_H2_Lq4_L300": lambda: case_decode(2, 4, 300, [300, 137])},
    "decode_gqa": {"B2_Lq1_L9": lambda: case_decode(32, 1, 9, [9, 3], hkv=8, e=128),
                   "B2_Lq4_L150": lambda: case_decode(32, 4, 150, [150, 0], hkv=8, e=128)},
    "decode_sliding_window": {"B2_H2_Lq1_L300": lambda: case_decode(2, 1, 300, [300, 129], window=128),
                              "B3_H1_Lq4_L200": lambda: case_decode(1, 4, 200, [200, 131, 0], window=128)},
    "decode_rope": {"B3_H2_Lq4_L300": lambda: case_decode(2, 4, 300, [300, 2, 77], rotate=True),
                    "B1_H1_Lq1_L5000": lambda: case_decode(1, 1, 5000, [4321], rotate=True)},
    # Causal and key padding together: an entry wholly padded (its rows zero), one padded past its
    # first key only (every row sees key 0 at least), one unpadded.
    "mha_causal_padding": {"B3_L6": lambda: case_mha_padding(3, 6, [6, 0, 1], True),
                           "B2_L9": lambda: case_mha_padding(2, 9, [5, 9], True)},
    "mha_bias": {"B1_L5": lambda: case_mha_bias(1, 5), "B2_L7": lambda: case_mha_bias(2, 7)},
}
# Large logits with non-integer inputs (docs/contract.md §5): heads in ±75, layer inputs in ±20 (behind
# a LayerNorm, gamma ×16), so that scores reach 10³–10⁴ with near-ties, for every variant. Drawn after every case above, so that those keep their numbers.
LARGE_LOGIT_CASES = {
    "sdpa": {"B1_H2_L64_large_logits": large_logits(75, lambda: case_sdpa(1, 2, 64, 64))},
    "sdpa_causal": {"B1_H2_L64_large_logits": large_logits(75, lambda: case_sdpa(1, 2, 64, 64, True))},
    "sliding_window_attention": {"B1_H1_L200_large_logits": large_logits(75, lambda: case_sliding_window(1, 1, 200))},
    "alibi_attention": {"B1_L40_large_logits": large_logits(75, lambda: case_alibi(1, 40, 40))},
    "softcap_attention": {"B1_H2_L40_large_logits": large_logits(75, lambda: case_softcap(1, 2, 40, 40))},
    "masked_attention": {"B2_H2_L40_large_logits": large_logits(75, lambda: case_masked(2, 2, 40, 40))},
    "prefix_lm_attention": {"B2_H2_L40_large_logits": large_logits(75, lambda: case_prefix_lm(2, 2, 40, [13, 0]))},
    "document_attention": {"B1_H2_L40_large_logits": large_logits(75, lambda: case_document(1, 2, [[17, 23]]))},
    "relative_position_attention": {"B1_L40_large_logits": large_logits(75, lambda: case_relative_bias(1, 40, 40))},
    "rope_attention": {"B1_H2_L40_large_logits": large_logits(75, lambda: case_rope(1, 2, 40, 40))},
    "decode": {"B2_H2_Lq4_L100_large_logits": large_logits(75, lambda: case_decode(2, 4, 100, [100, 37]))},
    "decode_gqa": {"B1_Lq4_L40_large_logits": large_logits(75, lambda: case_decode(32, 4, 40, [40], hkv=8, e=128))},
    "decode_sliding_window": {"B1_H2_Lq4_L200_large_logits":
                              large_logits(75, lambda: case_decode(2, 4, 200, [200], window=128))},
    "decode_rope": {"B1_H2_Lq4_L100_large_logits": large_logits(75, lambda: case_decode(2, 4, 100, [90], rotate=True))},
    "mha": {"B1_L20_large_logits": large_logits(20, lambda: case_mha(1, 20))},
    "mha_causal": {"B1_L20_large_logits": large_logits(20, lambda: case_mha(1, 20, True))},
    "mha_padding": {"B2_L20_large_logits": large_logits(20, lambda: case_mha_padding(2, 20, [20, 7]))},
    "mha_causal_padding": {"B2_L20_large_logits": large_logits(20, lambda: case_mha_padding(2, 20, [20, 7], True))},
    "cross_attention": {"B1_Lq9_Lk20_large_logits": large_logits(20, lambda: case_cross(1, 9, 20))},
    "gqa": {"B1_L20_large_logits": large_logits(20, lambda: case_grouped(1, 20, 2))},
    "mqa": {"B1_L20_large_logits": large_logits(20, lambda: case_grouped(1, 20, 1))},
    "mha_bias": {"B1_L20_large_logits": large_logits(20, lambda: case_mha_bias(1, 20))},
    "seed_attention": {"L40_large_logits": large_logits(25, lambda: case_seed_attention(40, large=True))},
    # Behind a LayerNorm, x's scale is undone: gamma 16 times larger instead.
    "self_attention_layer": {"B1_L20_large_logits": lambda: case_self_attention_layer(1, 20, gamma_times=16)},
    "positional_self_attention_layer": {"B1_L20_large_logits":
                                        lambda: case_self_attention_layer(1, 20, True, gamma_times=16)},
    "decoder_layer": {"B1_Lq9_Lk20_large_logits": lambda: case_decoder_layer(1, 9, 20, [20], gamma_times=16)},
}


# Run-time key/value head counts (contract §2): Hkv any divisor of H, the head counts of real models (Qwen2.5's
# 14/2, SmolLM's 9/3, MQA's 8/1, Phi's 32/32), and scales a call gives. After the cases above, so that their random
# inputs stay as they were.
GROUPED_HEADS_CASES = {
    "sdpa": {"B1_H14_Hkv2_Lq5_Lk7": lambda: case_sdpa(1, 14, 5, 7, hkv=2),
             "B2_H8_Hkv1_Lq3_Lk6": lambda: case_sdpa(2, 8, 3, 6, hkv=1),
             "B1_H2_Lq3_Lk5_scale_0.3": lambda: case_sdpa(1, 2, 3, 5, scale=0.3)},
    "sdpa_causal": {"B2_H9_Hkv3_L6": lambda: case_sdpa(2, 9, 6, 6, True, hkv=3),
                    "B1_H2_L5_scale_1": lambda: case_sdpa(1, 2, 5, 5, True, scale=1.0)},
    "decode": {"B2_H14_Hkv2_Lq4_L20": lambda: case_decode(14, 4, 20, [20, 9], hkv=2),
               "B1_H32_Hkv32_Lq1_L9": lambda: case_decode(32, 1, 9, [7])},
}


# PyTorch's attn_mask (contract §1): (B or 1, H or 1, Lq, Lk), bool or float (added), broadcast by NumPy here as by
# torch; alone, with causal (top-left) and over a cache (bottom-right). After the cases above (their random inputs).
def case_torch_mask(b, h, lq, lk, mask_batch, mask_heads, hkv=None, additive=False, is_causal=False, kv_length=None,
                    cap=None):
    """cap: soft-capped scores (softcap_masked, decode_softcap_masked), the cap given, large scores so it matters."""
    t = sdpa_inputs(b, h, lq, lk, hkv=hkv, qscale=64 if cap is None else 4)
    modifier = None if cap is None else (lambda s, *_: cap * np.tanh(s / cap))
    shape = (mask_batch, mask_heads, lq, lk)
    if additive:
        mask = (rng.uniform(-3, 3, shape)).astype(np.float32)
        mask[rng.random(shape) < 0.3] = -np.inf
        mask[0, 0, min(1, lq - 1), :] = -np.inf  # one row with no key: zeros
        o, p = attend(t["q"], t["k"], t["v"], bias=mask)
    else:
        mask = rng.random(shape) < 0.7
        mask[0, 0, min(1, lq - 1), :] = False
        allowed = mask
        if is_causal:
            allowed = allowed & causal(lq, lk)
        if kv_length is not None:
            allowed = allowed & decode_allowed(kv_length, lq, lk)
        o, p = attend(t["q"], t["k"], t["v"], allowed, modifier=modifier)
    t["attn_mask"] = mask
    if cap is not None:
        t["cap"] = np.array(cap, dtype=np.float32)
    if kv_length is not None:
        t["kv_length"] = np.array(kv_length, dtype=np.int32)
    return t, {}, o, p


TORCH_MASK_CASES = {
    "sdpa_masked": {"B2_H3_Lq5_Lk7_mask_1_H": lambda: case_torch_mask(2, 3, 5, 7, 1, 3),
                    "B2_H4_Hkv2_Lq6_Lk9_mask_B_1": lambda: case_torch_mask(2, 4, 6, 9, 2, 1, hkv=2)},
    "sdpa_additive": {"B2_H2_Lq5_Lk8_mask_1_1": lambda: case_torch_mask(2, 2, 5, 8, 1, 1, additive=True),
                      "B1_H3_Hkv1_Lq4_Lk6_mask_B_H": lambda: case_torch_mask(1, 3, 4, 6, 1, 3, hkv=1, additive=True)},
    "sdpa_causal_masked": {"B2_H2_L6_mask_B_1": lambda: case_torch_mask(2, 2, 6, 6, 2, 1, is_causal=True),
                           "B1_H3_Hkv1_Lq5_Lk8_mask_1_H": lambda: case_torch_mask(1, 3, 5, 8, 1, 3, hkv=1,
                                                                                  is_causal=True)},
    "decode_masked": {"B2_H4_Hkv2_Lq3_L12_mask_B_1": lambda: case_torch_mask(2, 4, 3, 12, 2, 1, hkv=2,
                                                                               kv_length=[12, 5]),
                      "B1_H2_Lq1_L9_mask_1_1": lambda: case_torch_mask(1, 2, 1, 9, 1, 1, kv_length=[7])},
}
# Built-in parameters a call gives (contract §2: the window, the cap, ALiBi's slopes at run time).
RUN_TIME_PARAMETER_CASES = {
    "sliding_window_attention": {"B2_H3_L20_window_5": lambda: case_sliding_window(2, 3, 20, window=5, given=True)},
    "softcap_attention": {"B1_H2_L9_cap_3.5": lambda: case_softcap(1, 2, 9, 9, cap=3.5, given=True)},
    "alibi_attention": {"B2_H3_Lq5_Lk7_slopes": lambda: case_alibi(2, 5, 7, h=3, slopes=[0.5, 0.125, 2.0])},
}
# Gemma-2's and Mistral's attention (contract §2): the soft-cap with and without a window, prefill and decode, and a
# decode window a call gives. Drawn last, so that every case above keeps its numbers.
GEMMA_AND_MISTRAL_CASES = {
    "softcap_sliding_window_attention": {"B2_H4_Hkv2_L20_cap_3.5_window_6":
                                         lambda: case_softcap(2, 4, 20, 20, cap=3.5, given=True, window=6, hkv=2),
                                         "B1_H2_L9_window_2": lambda: case_softcap(1, 2, 9, 9, window=2),
                                         "B1_H2_L40_window_13_large_logits":
                                         large_logits(75, lambda: case_softcap(1, 2, 40, 40, window=13))},
    "decode_softcap": {"B3_H4_Hkv2_Lq4_L40": lambda: case_decode(4, 4, 40, [40, 9, 0], hkv=2, cap=20.0),
                       "B2_H2_Lq1_L300_cap_0.5_window_50":
                       lambda: case_decode(2, 1, 300, [300, 129], window=50, cap=0.5, given=True),
                       "B2_H2_Lq4_L100_large_logits":
                       large_logits(75, lambda: case_decode(2, 4, 100, [100, 37], cap=20.0))},
    "decode_sliding_window": {"B2_H4_Hkv2_Lq4_L60_E128_window_9":
                              lambda: case_decode(4, 4, 60, [60, 23], hkv=2, e=128, window=9, given=True)},
}
# Gemma-2 as transformers calls it: soft-capped scores with its bool mask. Drawn after every case above.
GEMMA_MASK_CASES = {
    "softcap_masked": {"B2_H4_Hkv2_Lq6_Lk9_mask_B_1_cap_3.5": lambda: case_torch_mask(2, 4, 6, 9, 2, 1, hkv=2, cap=3.5),
                       "B1_H2_L40_mask_1_H_cap_20_large_logits":
                       large_logits(75, lambda: case_torch_mask(1, 2, 40, 40, 1, 2, cap=20.0))},
    "decode_softcap_masked": {"B2_H4_Hkv2_Lq3_L12_mask_B_1_cap_3.5":
                              lambda: case_torch_mask(2, 4, 3, 12, 2, 1, hkv=2, kv_length=[12, 5], cap=3.5),
                              "B1_H2_Lq1_L9_mask_1_1_cap_0.5": lambda: case_torch_mask(1, 2, 1, 9, 1, 1, kv_length=[7],
                                                                                       cap=0.5),
                              "B2_H2_Lq4_L40_mask_B_1_cap_20_large_logits":
                              large_logits(75, lambda: case_torch_mask(2, 2, 4, 40, 2, 1, kv_length=[40, 17],
                                                                       cap=20.0))},
}


def case_decode_u8(h, lq, lmax, kv_length, hkv=None, e=64):
    """A cache quantized by token (contract §1): codes any byte, scales of act()'s span over 255 codes, zero points
    near the middle code and not whole; the oracle attends over (code − zero) · scale. The codes are stored as
    float32 holding whole numbers (the golden loader reads every file as numbers; the kernels' uint8 type is checked
    by tests/kernels and tests/cli)."""
    b = len(kv_length)
    hkv = h if hkv is None else hkv
    t = {"q": act(b, h, lq, e)}
    dense = {}
    for n in ("k", "v"):
        codes = rng.integers(0, 256, size=(b, hkv, lmax, e))
        scale = (rng.uniform(0.5, 1.5, size=(b, hkv, lmax)) * 2 * ACTIVATION_SPAN[0] / 64 / 255).astype(np.float32)
        zero = rng.uniform(100, 155, size=(b, hkv, lmax)).astype(np.float32)
        dense[n] = (codes - zero.astype(np.float64)[..., None]) * scale.astype(np.float64)[..., None]
        t.update({n: codes.astype(np.float32), f"{n}_scale": scale, f"{n}_zero": zero})
    o, p = attend(t["q"], dense["k"], dense["v"], decode_allowed(kv_length, lq, lmax))
    return dict(t, kv_length=np.array(kv_length, dtype=np.int32)), {}, o, p


def case_decode_i8(h, lq, lmax, kv_length, hkv=None, e=64, group=None):
    """A symmetric int8 cache (contract §1): codes any int8, a scale per token (group None) or per group of channels,
    of act()'s span over 127 codes; the oracle attends over code · scale. Codes stored as float32 (as decode_u8's)."""
    b = len(kv_length)
    hkv = h if hkv is None else hkv
    groups = (e // group,) if group else ()
    t = {"q": act(b, h, lq, e)}
    dense = {}
    for n in ("k", "v"):
        codes = rng.integers(-128, 128, size=(b, hkv, lmax, e))
        scale = (rng.uniform(0.5, 1.5, size=(b, hkv, lmax) + groups) * ACTIVATION_SPAN[0] / 64 / 127).astype(np.float32)
        per_channel = np.repeat(scale, group, axis=-1) if group else scale[..., None]
        dense[n] = codes * per_channel.astype(np.float64)
        t.update({n: codes.astype(np.float32), f"{n}_scale": scale})
    o, p = attend(t["q"], dense["k"], dense["v"], decode_allowed(kv_length, lq, lmax))
    return dict(t, kv_length=np.array(kv_length, dtype=np.int32)), {}, o, p


def case_decode_u8_kc(h, lq, lmax, kv_length, hkv=None, e=64, block=128):
    """Keys by channel of blocks of `block` tokens (contract §1, decode_u8_kc128): codes any byte, a scale and zero
    point per (b, h, block, channel) (B, Hkv, ⌈Lmax/block⌉, E), token l reading block l // block; values by token as
    case_decode_u8's. Codes stored as float32 (as decode_u8's)."""
    b = len(kv_length)
    hkv = h if hkv is None else hkv
    blocks = -(-lmax // block)
    t = {"q": act(b, h, lq, e)}
    codes = rng.integers(0, 256, size=(b, hkv, lmax, e))
    scale = (rng.uniform(0.5, 1.5, size=(b, hkv, blocks, e)) * 2 * ACTIVATION_SPAN[0] / 64 / 255).astype(np.float32)
    zero = rng.uniform(100, 155, size=(b, hkv, blocks, e)).astype(np.float32)
    token_block = np.arange(lmax) // block
    dense = {"k": (codes - zero.astype(np.float64)[:, :, token_block]) * scale.astype(np.float64)[:, :, token_block]}
    t.update({"k": codes.astype(np.float32), "k_scale": scale, "k_zero": zero})
    codes = rng.integers(0, 256, size=(b, hkv, lmax, e))
    scale = (rng.uniform(0.5, 1.5, size=(b, hkv, lmax)) * 2 * ACTIVATION_SPAN[0] / 64 / 255).astype(np.float32)
    zero = rng.uniform(100, 155, size=(b, hkv, lmax)).astype(np.float32)
    dense["v"] = (codes - zero.astype(np.float64)[..., None]) * scale.astype(np.float64)[..., None]
    t.update({"v": codes.astype(np.float32), "v_scale": scale, "v_zero": zero})
    o, p = attend(t["q"], dense["k"], dense["v"], decode_allowed(kv_length, lq, lmax))
    return dict(t, kv_length=np.array(kv_length, dtype=np.int32)), {}, o, p


# Quantized caches. Drawn after every case above (decode_i8's after decode_u8's).
QUANTIZED_CASES = {
    "decode_u8": {"B3_H2_Lq1_L20": lambda: case_decode_u8(2, 1, 20, [20, 0, 7]),
                  "B2_H4_Hkv2_Lq4_L40_E128": lambda: case_decode_u8(4, 4, 40, [40, 9], hkv=2, e=128),
                  "B2_H2_Lq4_L100_large_logits": large_logits(75, lambda: case_decode_u8(2, 4, 100, [100, 37]))},
    "decode_i8": {"B3_H2_Lq1_L20": lambda: case_decode_i8(2, 1, 20, [20, 0, 7]),
                  "B2_H4_Hkv2_Lq4_L40_E80": lambda: case_decode_i8(4, 4, 40, [40, 9], hkv=2, e=80),
                  "B2_H2_Lq4_L100_large_logits": large_logits(75, lambda: case_decode_i8(2, 4, 100, [100, 37]))},
    "decode_i8_g32": {"B2_H2_Lq1_L20": lambda: case_decode_i8(2, 1, 20, [20, 3], group=32),
                      "B2_H4_Hkv2_Lq4_L40_E128": lambda: case_decode_i8(4, 4, 40, [40, 9], hkv=2, e=128, group=32),
                      "B2_H2_Lq4_L100_large_logits":
                      large_logits(75, lambda: case_decode_i8(2, 4, 100, [100, 37], group=32))},
    # Caches of 300 and 20 slots: whole blocks of 128 and a partial one, and one partial block only.
    "decode_u8_kc128": {"B3_H2_Lq1_L300": lambda: case_decode_u8_kc(2, 1, 300, [300, 0, 150]),
                        "B2_H4_Hkv2_Lq4_L20_E128": lambda: case_decode_u8_kc(4, 4, 20, [20, 9], hkv=2, e=128),
                        "B2_H2_Lq4_L260_large_logits":
                        large_logits(75, lambda: case_decode_u8_kc(2, 4, 260, [260, 131]))},
}
for variant, extra in (("sdpa_masked", {}), ("sdpa_additive", {"additive": True}),
                       ("sdpa_causal_masked", {"is_causal": True}), ("decode_masked", {"kv_length": [40, 17]})):
    TORCH_MASK_CASES[variant]["B2_H2_L40_mask_B_1_large_logits"] = large_logits(
        75, lambda extra=extra: case_torch_mask(2, 2, 40, 40, 2, 1, **extra))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(os.path.join(OUT, "weights512"))
    for name, w in W512.items():
        np.save(os.path.join(OUT, "weights512", f"{name}.npy"), w)
    every_case = ([(variant, cases) for variant, cases in CASES.items()] + list(LARGE_LOGIT_CASES.items()) +
                  list(GROUPED_HEADS_CASES.items()) + list(TORCH_MASK_CASES.items()) +
                  list(RUN_TIME_PARAMETER_CASES.items()) + list(GEMMA_AND_MISTRAL_CASES.items()) +
                  list(GEMMA_MASK_CASES.items()) + list(QUANTIZED_CASES.items()))
    for variant, cases in every_case:
        for case, make in cases.items():
            d = os.path.join(OUT, variant, case)
            os.makedirs(d)
            inputs, shared, output, weights = make()
            lines = []
            for name, value in inputs.items():
                np.save(os.path.join(d, f"{name}.npy"), value)
                lines.append(f"input {name} {name}.npy")
            lines += [f"input {name} {path}" for name, path in shared.items()]
            np.save(os.path.join(d, "expected_output.npy"), np.asarray(output, np.float64))
            lines.append("output expected_output.npy")
            if weights.size <= MAX_WEIGHTS_STORED:
                np.save(os.path.join(d, "expected_attention_weights.npy"), np.asarray(weights, np.float64))
                lines.append("attention_weights expected_attention_weights.npy")
            with open(os.path.join(d, "case.txt"), "w") as f:
                f.write("# written by tests/golden/make_golden.py; <role> <name> <file relative to this folder>\n")
                f.write("\n".join(lines) + "\n")
    print(f"wrote {sum(len(c) for _, c in every_case)} cases for {len(CASES)} variants into {OUT}")


if __name__ == "__main__":
    main()
