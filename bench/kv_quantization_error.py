"""The error of quantizing a KV cache, per format, including formats attnforge does not build (a scale per channel of K).

Answers whether a scale per channel of K (KIVI's layout: per channel over blocks of G tokens, asymmetric uint8, V by
token) pays in accuracy against the formats the kernels read (docs/storage_types.md): each format's values are
emulated in NumPy by its rule, and attention over them (float64) is compared with float64 attention over the values
before quantization, max |difference| over the outputs; no kernel runs (the kernels match the interpreter on the
dequantized cache within docs/contract.md §5, orders below these errors). Keys and values are bench/quantized_decode.py's:
normal, with four channels of each head 8x larger (K caches' outlier channels), Lq queries at the cache's end.

    .venv/bin/python bench/kv_quantization_error.py [--lk 4096,32768] [--lq 1,4] [--out DIR]
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_peers import decode_reference  # noqa: E402
from quantized_decode import SHAPES, cache_values, q8_0  # noqa: E402


def u8_by_rows(x, axis):
    """uint8 codes with a scale and zero point per slice along `axis` (attnforge's rule, docs/storage_types.md):
    scale = (max − min) / 255, codes round((x − min) / scale); the values (code − zero)·scale = code·scale + min."""
    x = x.astype(np.float64)
    lo, hi = x.min(axis=axis, keepdims=True), x.max(axis=axis, keepdims=True)
    scale = np.where(hi > lo, (hi - lo) / 255, 1.0).astype(np.float32).astype(np.float64)
    codes = np.clip(np.round((x - lo) / scale), 0, 255)
    return checked(x, codes * scale + lo, scale)


def checked(x, values, scale):
    """values, after checking the rule's promise: each within half a step (its scale) of x."""
    worst = float((np.abs(values - x) - scale / 2).max())
    if worst > 1e-9 * float(np.abs(x).max()):
        raise AssertionError(f"a quantized value is {worst:.3g} past half a step from its original")
    return values


def i8_by_groups(x, group):
    """int8 codes with a scale per group of `group` channels (attnforge's decode_i8 for group = E, _g32 for 32)."""
    blocks = x.reshape(*x.shape[:-1], -1, group).astype(np.float64)
    scale = np.abs(blocks).max(axis=-1, keepdims=True) / 127
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32).astype(np.float64)
    return checked(blocks, np.clip(np.round(blocks / scale), -127, 127) * scale, scale).reshape(x.shape)


def k_by_channel(k, tokens):
    """K with a uint8 range per channel over each block of `tokens` tokens (KIVI's K; a last partial block too)."""
    L = k.shape[2]
    out = np.empty(k.shape)
    for start in range(0, L, tokens):
        out[:, :, start:start + tokens] = u8_by_rows(k[:, :, start:start + tokens], axis=2)
    return out


E_BYTES = 128  # the head width the bytes below are counted at: one byte a code


def per_channel_bytes(tokens):
    """A token's bytes, K and V averaged: K's codes and its share of a (scale, zero) per channel and block of
    `tokens` tokens; V's codes and its (scale, zero)."""
    return ((E_BYTES + 8 * E_BYTES / tokens) + (E_BYTES + 8)) / 2


FORMATS = {
    # name: (K's values, V's values, bytes a token and head at E = 128, K and V averaged: codes, scales, zero points)
    "u8 by token (decode_u8)": (lambda k: u8_by_rows(k, -1), lambda v: u8_by_rows(v, -1), E_BYTES + 8),
    "i8 by token (decode_i8)": (lambda k: i8_by_groups(k, k.shape[-1]), lambda v: i8_by_groups(v, v.shape[-1]),
                                E_BYTES + 4),
    "i8 by 32 channels (decode_i8_g32)": (lambda k: i8_by_groups(k, 32), lambda v: i8_by_groups(v, 32),
                                          E_BYTES + 4 * E_BYTES / 32),
    "q8_0 (emulated)": (q8_0, q8_0, E_BYTES + 8),
    "K u8 by channel, 32 tokens; V u8 by token (not built)": (lambda k: k_by_channel(k, 32),
                                                              lambda v: u8_by_rows(v, -1), per_channel_bytes(32)),
    "K u8 by channel, 128 tokens; V u8 by token (not built)": (lambda k: k_by_channel(k, 128),
                                                               lambda v: u8_by_rows(v, -1), per_channel_bytes(128)),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lk", default="4096,32768", help="cache lengths (default 4096,32768)")
    ap.add_argument("--lq", default="1,4", help="query lengths (default 1,4)")
    ap.add_argument("--out", help="a folder for results.json")
    a = ap.parse_args()
    numbers = lambda text: [int(n) for n in text.split(",")]  # noqa: E731
    rng = np.random.default_rng(0)
    rows = []
    for label, (Hq, Hkv, E) in SHAPES.items():
        for Lq in numbers(a.lq):
            for Lk in numbers(a.lk):
                q = rng.standard_normal((1, Hq, Lq, E), dtype=np.float32)
                k, v = cache_values(rng, (1, Hkv, Lk, E)), cache_values(rng, (1, Hkv, Lk, E))
                kv_length = np.full(1, Lk, np.int32)
                ref = decode_reference(q, k, v, kv_length)
                for name, (kf, vf, _) in FORMATS.items():
                    out = decode_reference(q, kf(k), vf(v), kv_length)
                    error = float(np.abs(out - ref).max())
                    rows.append({"shape": label, "Lq": Lq, "Lk": Lk, "format": name, "error": error})
                    print(f"{label:14s} Lq {Lq} Lk {Lk:6d}  {name:56s} error {error:.4f}", flush=True)
    print("\nformat: smallest-largest error over the cells; bytes a token and KV head at E = 128 (K and V averaged)")
    for name, (_, _, nbytes) in FORMATS.items():
        errors = [r["error"] for r in rows if r["format"] == name]
        print(f"  {name:56s} {min(errors):.3f}-{max(errors):.3f}  {nbytes:.0f} B")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "quantization_error.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
