"""PyTorch float64 references of every built-in variant, written from docs/contract.md and docs/variants.md
with torch's own attention where it has it (scaled_dot_product_attention, nn.MultiheadAttention) and plain
torch ops where it has not (soft-capping, rotary positions). Rows with no key to attend to are zeros
(contract §1); torch gives NaN there, so references replace those rows."""
import math

import torch
import torch.nn.functional as F

WINDOW = 128        # sliding_window_attention's default window (decode_sliding_window's): keys at most 128 back
SOFTCAP = 20.0      # softcap_attention's default cap: 20·tanh(s/20), causal
RELATIVE_CLIP = 128  # relative_position_attention: bias[h, clip(j − i, ±128) + 128]
HEADS = 8           # the D = 512 variants: 8 query heads of width 64


def _f64(inputs):
    return {n: (t.to(torch.float64) if t.is_floating_point() else t) for n, t in inputs.items()}


def sdpa_reference(q, k, v, allowed=None, bias=None, is_causal=False, scale=None):
    """torch's SDPA (float64) with GQA, a boolean mask (True = attend) or an additive bias, the scale given (a 0-d
    tensor) or 1/√E; fully masked rows 0."""
    if is_causal:  # as a boolean mask: torch's is_causal gives NaN rows under a negative scale (torch 2.15, float64)
        lq, lk = q.shape[-2], k.shape[-2]
        top_left = torch.ones(lq, lk, dtype=torch.bool).tril()
        allowed = top_left if allowed is None else allowed & top_left
        is_causal = False
    mask = allowed
    if bias is not None:
        mask = bias if allowed is None else bias.masked_fill(~allowed, -math.inf)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal,
                                         enable_gqa=q.shape[1] != k.shape[1],
                                         scale=None if scale is None else float(scale))
    return torch.nan_to_num(out, nan=0.0)


def plain_attention(q, k, v, allowed=None, modify=None, scale=None):
    """softmax(modify(q·kᵀ·scale)) masked, ·v, in plain torch ops (for score modifiers SDPA lacks); scale 1/√E
    where None; k and v of Hkv heads repeated for the Hq query heads (GQA)."""
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    s = q @ k.transpose(-1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else float(scale))
    if modify is not None:
        s = modify(s)
    if allowed is not None:
        s = s.masked_fill(~allowed, -math.inf)
    p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    return p @ v


def positions(lq, lk):
    return torch.arange(lq)[:, None], torch.arange(lk)[None, :]


def causal(lq, lk):
    i, j = positions(lq, lk)
    return j <= i  # top-left aligned (contract §1)


def rope(x, offsets=None, base=10000.0):
    """Rotate-half pairing: column c with c + E/2, angle pos·base^(−2c/E); pos = offsets[b] + row."""
    length, e = x.shape[-2], x.shape[-1]
    half = e // 2
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    if offsets is not None:
        pos = offsets.to(torch.float64)[:, None, None, None] + pos  # (B, 1, L, 1)
    angle = pos * base ** (-2.0 * torch.arange(half, dtype=torch.float64) / e)
    c, s = torch.cos(angle), torch.sin(angle)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def multihead(x, memory, w, allowed_mask=None, key_padding_mask=None, bias=None):
    """torch.nn.MultiheadAttention (8 heads, batch first) with our x·W weights (its in_proj is Wᵀ)."""
    d = x.shape[-1]
    m = torch.nn.MultiheadAttention(d, HEADS, bias=bias is not None, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([w["wq"].T, w["wk"].T, w["wv"].T]))
        m.out_proj.weight.copy_(w["wo"].T)
        if bias is not None:
            m.in_proj_bias.copy_(torch.cat([bias["bq"], bias["bk"], bias["bv"]]))
            m.out_proj.bias.copy_(bias["bo"])
        attn_mask = None if allowed_mask is None else ~allowed_mask  # MHA's boolean mask: True = not allowed
        y, _ = m(x, memory, memory, key_padding_mask=key_padding_mask, attn_mask=attn_mask, need_weights=False)
    return torch.nan_to_num(y, nan=0.0)


def split(x, h):
    b, l, d = x.shape
    return x.reshape(b, l, h, d // h).transpose(1, 2)


def merge(o):
    b, h, l, e = o.shape
    return o.transpose(1, 2).reshape(b, l, h * e)


def grouped(x, w):
    """GQA/MQA: 8 query heads of width 64 over W_k's columns / 64 key/value heads."""
    hkv = w["wk"].shape[1] // 64
    q, k, v = split(x @ w["wq"], HEADS), split(x @ w["wk"], hkv), split(x @ w["wv"], hkv)
    return merge(sdpa_reference(q, k, v)) @ w["wo"]


def layer_norm(x, gamma, beta):
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps=1e-5)


def positional_encoding(length, d):
    """Seed 001 §4: sin on even columns, cos on odd, angle pos·10000^(−2i/d)."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
    pe = torch.zeros(length, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return pe


def decode_allowed(kv_length, lq, lmax, window=None):
    """A cache (contract §1): keys j < kv_length[b]; query i at position kv_length[b] − Lq + i, causal from there."""
    n = kv_length.to(torch.int64)[:, None, None]
    pos = n - lq + torch.arange(lq)[None, :, None]
    j = torch.arange(lmax)[None, None, :]
    allowed = (j < n) & (j <= pos)
    if window is not None:
        allowed &= pos - j <= window
    return allowed[:, None]  # (B, 1, Lq, Lmax)


def alibi_bias(lq, lk, heads, slopes=None):
    """slopes: a call's own (H), else alibi_attention's default 2^(-8(h+1)/H)."""
    if slopes is None:
        slopes = 2.0 ** (-8.0 * (torch.arange(heads, dtype=torch.float64) + 1) / heads)
    i, j = positions(lq, lk)
    return -slopes[:, None, None] * (i - j).abs()


def relative_bias(table, lq, lk):
    i, j = positions(lq, lk)
    return table[:, (j - i).clamp(-RELATIVE_CLIP, RELATIVE_CLIP) + RELATIVE_CLIP]


def reference(variant, inputs):
    """The variant's output in float64 from its inputs (a dict of torch tensors)."""
    t = _f64(inputs)
    g = t.get
    if variant == "seed_attention":
        q, k, v = (t["x"] @ t[w] for w in ("wq", "wk", "wv"))
        return sdpa_reference(q[None, None], k[None, None], v[None, None])[0, 0]
    if variant == "sdpa":
        return sdpa_reference(t["q"], t["k"], t["v"], scale=t.get("scale"))
    if variant == "sdpa_causal":
        return sdpa_reference(t["q"], t["k"], t["v"], is_causal=True, scale=t.get("scale"))
    if variant in ("mha", "mha_causal", "mha_padding", "mha_causal_padding", "mha_bias"):
        l = t["x"].shape[1]
        allowed = causal(l, l) if "causal" in variant else None
        bias = {n: t[n] for n in ("bq", "bk", "bv", "bo")} if variant == "mha_bias" else None
        return multihead(t["x"], t["x"], t, allowed, g("key_padding_mask"), bias)
    if variant == "cross_attention":
        return multihead(t["x"], t["memory"], t)
    if variant in ("gqa", "mqa"):
        return grouped(t["x"], t)
    if variant in ("self_attention_layer", "positional_self_attention_layer"):
        h = t["x"] + (positional_encoding(t["x"].shape[1], 512) if variant.startswith("positional") else 0.0)
        n = layer_norm(h, t["gamma"], t["beta"])
        return h + multihead(n, n, t)
    if variant == "sliding_window_attention":  # the window and the cap: the call's, else the variant's default
        i, j = positions(t["q"].shape[2], t["k"].shape[2])
        window = int(t["window"]) if "window" in t else WINDOW
        return sdpa_reference(t["q"], t["k"], t["v"], allowed=(j <= i) & (i - j <= window), scale=g("scale"))
    if variant == "alibi_attention":
        bias = alibi_bias(t["q"].shape[2], t["k"].shape[2], t["q"].shape[1], g("slopes"))
        return sdpa_reference(t["q"], t["k"], t["v"], bias=bias)
    if variant in ("softcap_attention", "softcap_sliding_window_attention"):  # Gemma-2's: the cap (and a window)
        lq, lk = t["q"].shape[2], t["k"].shape[2]
        cap = float(t["cap"]) if "cap" in t else SOFTCAP
        allowed = causal(lq, lk)
        if "window" in t:
            i, j = positions(lq, lk)
            allowed = allowed & (i - j <= int(t["window"]))
        return plain_attention(t["q"], t["k"], t["v"], allowed, lambda s: cap * torch.tanh(s / cap),
                               scale=g("scale"))
    if variant == "masked_attention":
        return sdpa_reference(t["q"], t["k"], t["v"], allowed=t["attn_mask"][:, None])
    if variant == "prefix_lm_attention":
        l = t["q"].shape[2]
        i, j = positions(l, l)
        allowed = (j <= i)[None, None] | (j[None, None] < t["prefix_length"].to(torch.int64)[:, None, None, None])
        return sdpa_reference(t["q"], t["k"], t["v"], allowed=allowed)
    if variant == "document_attention":
        ids = t["document_ids"]
        l = ids.shape[1]
        allowed = (ids[:, :, None] == ids[:, None, :]) & causal(l, l)[None]
        return sdpa_reference(t["q"], t["k"], t["v"], allowed=allowed[:, None])
    if variant == "relative_position_attention":
        bias = relative_bias(t["relative_bias"], t["q"].shape[2], t["k"].shape[2])
        return sdpa_reference(t["q"], t["k"], t["v"], bias=bias)
    if variant == "rope_attention":
        lq, lk = t["q"].shape[2], t["k"].shape[2]
        return sdpa_reference(rope(t["q"]), rope(t["k"]), t["v"], allowed=causal(lq, lk))
    if variant == "decoder_layer":
        x, memory = t["x"], t["memory"]
        l = x.shape[1]
        n1 = layer_norm(x, t["ln1_gamma"], t["ln1_beta"])
        h = x + multihead(n1, n1, t, allowed_mask=causal(l, l))
        n2 = layer_norm(h, t["ln2_gamma"], t["ln2_beta"])
        cross = {"wq": t["cross_wq"], "wk": t["cross_wk"], "wv": t["cross_wv"], "wo": t["cross_wo"]}
        return h + multihead(n2, memory, cross, key_padding_mask=t["memory_padding_mask"])
    # PyTorch's attn_mask, broadcast by torch itself over its axes of size 1.
    if variant == "sdpa_masked":
        return sdpa_reference(t["q"], t["k"], t["v"], allowed=t["attn_mask"], scale=t.get("scale"))
    if variant == "sdpa_additive":
        return sdpa_reference(t["q"], t["k"], t["v"], bias=t["attn_mask"], scale=t.get("scale"))
    if variant == "sdpa_causal_masked":
        return sdpa_reference(t["q"], t["k"], t["v"], allowed=t["attn_mask"], is_causal=True, scale=t.get("scale"))
    if variant == "decode_masked":
        q, n = t["q"], t["kv_length"]
        allowed = decode_allowed(n, q.shape[2], t["k"].shape[2]) & t["attn_mask"]
        return sdpa_reference(q, t["k"], t["v"], allowed=allowed, scale=t.get("scale"))
    if variant in ("softcap_masked", "decode_softcap_masked"):  # Gemma-2 as transformers calls it
        cap = float(t["cap"]) if "cap" in t else SOFTCAP
        allowed = t["attn_mask"]
        if variant == "decode_softcap_masked":
            allowed = decode_allowed(t["kv_length"], t["q"].shape[2], t["k"].shape[2]) & allowed
        return plain_attention(t["q"], t["k"], t["v"], allowed, lambda s: cap * torch.tanh(s / cap), scale=g("scale"))
    if variant in ("decode_u8", "decode_i8", "decode_i8_g32", "decode_u8_kc128"):
        k, v = dequantized(t, "k"), dequantized(t, "v")
        allowed = decode_allowed(t["kv_length"], t["q"].shape[2], k.shape[2])
        return sdpa_reference(t["q"], k, v, allowed=allowed, scale=t.get("scale"))
    if variant in ("decode", "decode_gqa", "decode_sliding_window", "decode_rope", "decode_softcap"):
        q, n = t["q"], t["kv_length"]
        lq, lmax = q.shape[2], t["k"].shape[2]
        if variant == "decode_rope":
            q = rope(q, offsets=n.to(torch.int64) - lq)  # the queries at their cache positions
        window = WINDOW if variant == "decode_sliding_window" else None
        window = int(t["window"]) if "window" in t else window
        allowed = decode_allowed(n, lq, lmax, window)
        if variant == "decode_softcap":
            cap = float(t["cap"]) if "cap" in t else SOFTCAP
            return plain_attention(q, t["k"], t["v"], allowed, lambda s: cap * torch.tanh(s / cap), scale=g("scale"))
        return sdpa_reference(q, t["k"], t["v"], allowed=allowed, scale=t.get("scale"))
    raise KeyError(f"no PyTorch reference for variant '{variant}'")


def dequantized(tensors, name, token_block=128):
    """A quantized cache's values (decode_u8's, decode_i8's, decode_i8_g32's or decode_u8_kc128's k or v): (code −
    zero) · scale per (b, h, token) or, scales (B, H, blocks, E), per channel of each block of token_block tokens
    (decode_u8_kc128's keys: 128), or code · scale with the scale per token or per group of E/groups channels."""
    t = {n: x.to(torch.float64) for n, x in tensors.items() if n.startswith(name)}
    codes, scale = t[name], t[f"{name}_scale"]
    if f"{name}_zero" in t and scale.dim() == 4:  # by channel: token l reads block l // token_block
        block = torch.arange(codes.shape[2]) // token_block
        return (codes - t[f"{name}_zero"][:, :, block]) * scale[:, :, block]
    if f"{name}_zero" in t:
        return (codes - t[f"{name}_zero"][..., None]) * scale[..., None]
    if scale.dim() == 3:
        return codes * scale[..., None]
    return codes * scale.repeat_interleave(codes.shape[-1] // scale.shape[-1], dim=-1)


def bound(variant, inputs, ref, dtype="float32"):
    """docs/contract.md §5: 1e-4·(1 + max|ref|) plus, where q and k are inputs, the float32 rounding of the
    scores 2·√E·2⁻²⁴·S·V; 5e-3 (bf16) or 2e-3 (fp16) · (1 + max|ref|) for 16-bit storage."""
    top = 1 + ref.abs().max().item()
    if dtype != "float32":
        return (5e-3 if dtype == "bf16" else 2e-3) * top
    term = 0.0
    if "q" in inputs and "k" in inputs:
        q, k, v = (dequantized(inputs, n) if f"{n}_scale" in inputs else inputs[n].to(torch.float64)
                   for n in ("q", "k", "v"))
        e = q.shape[-1]
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        s = (q.abs() @ k.abs().transpose(-1, -2)).max().item() / math.sqrt(e)
        term = 2 * math.sqrt(e) * 2.0 ** -24 * s * v.abs().max().item()
    return 1e-4 * top + term


def recorded_torch_calls(monkeypatch):
    """The list every attnforge.torch call (its extension's body) appends to, while the test runs: what it ran
    (`_native._last_torch_call()`: variant, kernel, dtype, each input's shape)."""
    import attnforge
    calls, native = [], attnforge._native.torch_attention

    def recorded(*arguments):
        result = native(*arguments)
        calls.append(attnforge._native._last_torch_call())
        return result

    monkeypatch.setattr(attnforge._native, "torch_attention", recorded)
    return calls
