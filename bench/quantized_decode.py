#!/usr/bin/env python3
"""Decode over a quantized KV cache (variants `decode_u8`, `decode_i8`, `decode_i8_g32`, `decode_u8_kc128`,
docs/storage_types.md "Quantized KV caches") beside our own float32 and bf16 decode and the peers, one decoding step
per cell, outputs checked first.

Per cell (B, Lq, Lk, shape, threads), every implementation gets the same float32 keys and values (normal, with a few
channels of large magnitude, as K caches have), and the same queries:
  - ours u8: the cache written by attnforge.quantize_into_cache, the decode_u8 kernel;
  - ours i8, ours i8 g32: int8 caches with a scale per token or per 32 channels (decode_i8, decode_i8_g32);
  - ours u8 kc128: keys uint8 by channel of blocks of 128 tokens, values as ours u8 (decode_u8_kc128);
  - ours bf16, ours float32: `decode` over the values in those types (bf16: the cache rounded, as our bf16 caches);
  - OpenVINO u8: its stateful SDPA (bench/decode_peers.py's OpenVino) with KV_CACHE_PRECISION u8 (its default on
    x86-64: a scale and zero point per token, as ours), the float32 cache set as its state and quantized by it;
  - OpenVINO u8 g32: the same with KEY_CACHE_GROUP_SIZE and VALUE_CACHE_GROUP_SIZE 32 (a scale and zero point per
    token and 32 channels; its bytes counted with float32 scales and zero points). Not run: its u4 caches
    (KEY/VALUE_CACHE_PRECISION u4 abort the process in 2026.4's stateful SDPA on x86-64) and KEY_CACHE_QUANT_MODE
    BY_CHANNEL (accepted, but its output is wrong in this stateful pattern: an error of 3.8 against 0.06);
  - PyTorch: the u8 cache dequantized ((code - zero) * scale) then SDPA, both inside the timed call.
Each output is compared with float64 attention on the values before quantization: the error of quantizing (the
kernels' own rounding is orders smaller, docs/contract.md §5), ours beside OpenVINO's and a q8_0 cache's (llama.cpp's
format: blocks of 32 channels, one scale max|x|/127 each, int8 codes; emulated in NumPy, attention in float64).

GB/s counts the bytes a step must read: codes and their scales and zero points (u8), or the cache in its type; the
read bandwidth is `attnforge bench`'s probe (fastest of its passes) at that thread count.

  .venv/bin/python bench/quantized_decode.py --attnforge build/tools/attnforge/attnforge [--quick] [--out DIR]
"""
import argparse
import itertools
import json
import os
import subprocess
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

from decode_peers import OpenVino, Unsupported, decode_reference, run_once  # noqa: E402
from timing import time_batch  # noqa: E402

SHAPES = {"MHA E64": (8, 8, 64), "GQA 32/8 E128": (32, 8, 128)}  # (Hq, Hkv, E)


def read_bandwidth(exe, threads):
    """`attnforge bench`'s read-bandwidth probe on `threads` threads (GB/s, the fastest of its passes)."""
    r = subprocess.run([exe, "bench", "decode", "--batch", "1", "--lq", "1", "--lk", "64", "--threads", str(threads),
                        "--no-interpreter", "--chosen-only", "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout[r.stdout.index("\n[") + 1:])[0]["read_bandwidth_fastest_gbs"]


def cache_values(rng, shape):
    """Keys or values as a model's cache holds them: normal, and 4 channels of each head 8x larger (K's outliers)."""
    x = rng.standard_normal(shape, dtype=np.float32)
    x[..., :4] *= 8
    return x


def quantize_u8(attnforge, x):
    b, h, l, e = x.shape
    codes, scale, zero = np.empty(x.shape, np.uint8), np.empty((b, h, l), np.float32), np.empty((b, h, l), np.float32)
    attnforge.quantize_into_cache(x, np.zeros(b, np.int32), codes, scale, zero)
    return codes, scale, zero


def quantize_i8(attnforge, x, group=None):
    b, h, l, e = x.shape
    codes, scale = np.empty(x.shape, np.int8), np.empty((b, h, l) + ((e // group,) if group else ()), np.float32)
    attnforge.quantize_into_cache(x, np.zeros(b, np.int32), codes, scale)
    return codes, scale


def q8_0(x):
    """llama.cpp's q8_0 format's values: per block of 32 channels, d = max|x| / 127, codes round(x / d) in int8."""
    blocks = x.reshape(*x.shape[:-1], -1, 32).astype(np.float64)
    d = np.abs(blocks).max(axis=-1, keepdims=True) / 127
    d = d.astype(np.float16).astype(np.float64)  # q8_0 keeps d in fp16
    codes = np.round(np.divide(blocks, d, out=np.zeros_like(blocks), where=d > 0)).clip(-127, 127)
    return (codes * d).reshape(x.shape)


def torch_dequantize_sdpa(q, k, v, kv_length, threads):
    import torch
    torch.set_num_threads(threads)
    t = {n: torch.from_numpy(a) for n, a in {"q": q, **k, **v}.items()}
    B, Hq, Lq, E = q.shape
    Lmax = k["k"].shape[2]
    n = torch.from_numpy(kv_length).to(torch.int64)[:, None, None, None]
    pos = n - Lq + torch.arange(Lq)[None, None, :, None]
    allowed = torch.arange(Lmax)[None, None, None, :] <= pos  # (B, 1, Lq, Lmax): causal bottom-right, < kv_length

    def call():
        kk = (t["k"].float() - t["k_zero"][..., None]) * t["k_scale"][..., None]
        vv = (t["v"].float() - t["v_zero"][..., None]) * t["v_scale"][..., None]
        return torch.nn.functional.scaled_dot_product_attention(t["q"], kk, vv, attn_mask=allowed,
                                                                enable_gqa=Hq != kk.shape[1])
    return call


class OpenVinoU8(OpenVino):
    """OpenVINO's u8 cache: a scale and zero point per token, or per token and `group` channels (its
    KEY_CACHE_GROUP_SIZE and VALUE_CACHE_GROUP_SIZE)."""

    def __init__(self, group=0):
        super().__init__()
        self.group = group

    def compile(self, model, threads):
        cfg = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "u8", "INFERENCE_NUM_THREADS": str(threads),
               "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1"}
        if self.group:
            cfg.update(KEY_CACHE_GROUP_SIZE=str(self.group), VALUE_CACHE_GROUP_SIZE=str(self.group))
        compiled = self.core.compile_model(model, "CPU", cfg)
        if compiled.get_property("KEY_CACHE_GROUP_SIZE") != self.group:
            raise Unsupported(f"OpenVINO did not take KEY_CACHE_GROUP_SIZE {self.group}")
        return compiled


def quantize_u8_by_channel(attnforge, x, token_block=128):
    b, h, l, e = x.shape
    blocks = -(-l // token_block)
    codes, scale, zero = (np.empty(x.shape, np.uint8), np.empty((b, h, blocks, e), np.float32),
                          np.empty((b, h, blocks, e), np.float32))
    attnforge.quantize_into_cache(x, np.zeros(b, np.int32), codes, scale, zero,
                                  open_block=np.empty((b, h, token_block, e), np.float32))
    return codes, scale, zero


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnforge", required=True, help="the attnforge program of the build (its Python module beside)")
    ap.add_argument("--quick", action="store_true", help="B = 1, Lq = 1, one thread only")
    ap.add_argument("--lk", default="4096,32768", help="cache lengths (default 4096,32768)")
    ap.add_argument("--batch", default="1,8", help="batch sizes (default 1,8)")
    ap.add_argument("--lq", default="1,4", help="query lengths (default 1,4)")
    ap.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    ap.add_argument("--out", help="a folder for results.json")
    a = ap.parse_args()
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(a.attnforge))))
    sys.path.insert(0, os.path.join(build, "python"))
    import attnforge
    try:
        openvino, openvino_g32 = OpenVinoU8(), OpenVinoU8(group=32)
    except ImportError as e:
        openvino = openvino_g32 = None
        print(f"[quantized] OpenVINO left out: {e}", file=sys.stderr)
    numbers = lambda text: [int(n) for n in text.split(",")]  # noqa: E731
    batches, queries, threads_list = (([1], [1], [1]) if a.quick else
                                      (numbers(a.batch), numbers(a.lq), numbers(a.threads)))
    bandwidth = {t: read_bandwidth(a.attnforge, t) for t in threads_list}
    print("read bandwidth probe, GB/s: " + ", ".join(f"{t} thread(s) {g:.1f}" for t, g in bandwidth.items()))
    rows = []
    rng = np.random.default_rng(0)
    for (label, (Hq, Hkv, E)), B, Lq, Lk in itertools.product(SHAPES.items(), batches, queries,
                                                                       numbers(a.lk)):
        q = rng.standard_normal((B, Hq, Lq, E), dtype=np.float32)
        k, v = cache_values(rng, (B, Hkv, Lk, E)), cache_values(rng, (B, Hkv, Lk, E))
        kv_length = np.full(B, Lk, np.int32)
        ref = decode_reference(q, k, v, kv_length)
        top = np.abs(ref).max()
        kq, vq = quantize_u8(attnforge, k), quantize_u8(attnforge, v)
        u8 = {"k": kq[0], "k_scale": kq[1], "k_zero": kq[2], "v": vq[0], "v_scale": vq[1], "v_zero": vq[2]}
        kc = quantize_u8_by_channel(attnforge, k)
        u8_kc = dict(u8, k=kc[0], k_scale=kc[1], k_zero=kc[2])
        i8 = {}
        for kind, group in (("i8", None), ("i8 g32", 32)):
            (kc, ks), (vc, vs) = quantize_i8(attnforge, k, group), quantize_i8(attnforge, v, group)
            i8[kind] = {"k": kc, "k_scale": ks, "v": vc, "v_scale": vs}
        q8 = decode_reference(q, q8_0(k), q8_0(v), kv_length)
        cache_bytes = {"u8": sum(x.nbytes for x in u8.values()), "bf16": k.nbytes, "float32": 2 * k.nbytes,
                       "u8 kc128": sum(x.nbytes for x in u8_kc.values()),
                       "OpenVINO u8 g32": k.size * 2 + 2 * 8 * k.size // 32}
        cache_bytes.update({kind: sum(x.nbytes for x in c.values()) for kind, c in i8.items()})
        for threads in threads_list:
            impls = {
                "ours u8": ("u8", lambda: (lambda: attnforge.run("decode_u8", q=q, kv_length=kv_length, threads=threads,
                                                                 **u8))),
                "ours u8 kc128": ("u8 kc128", lambda: (lambda: attnforge.run(
                    "decode_u8_kc128", q=q, kv_length=kv_length, threads=threads, **u8_kc))),
                "ours i8": ("i8", lambda: (lambda: attnforge.run("decode_i8", q=q, kv_length=kv_length, threads=threads,
                                                                 **i8["i8"]))),
                "ours i8 g32": ("i8 g32", lambda: (lambda: attnforge.run("decode_i8_g32", q=q, kv_length=kv_length,
                                                                         threads=threads, **i8["i8 g32"]))),
                "ours bf16": ("bf16", lambda: _ours_16(attnforge, q, k, v, kv_length, threads)),
                "ours float32": ("float32", lambda: (lambda: attnforge.run("decode", q=q, k=k, v=v, kv_length=kv_length,
                                                                           threads=threads))),
                "PyTorch dequantize + SDPA": ("u8", lambda: torch_dequantize_sdpa(
                    q, {n: u8[n] for n in ("k", "k_scale", "k_zero")}, {n: u8[n] for n in ("v", "v_scale", "v_zero")},
                    kv_length, threads)),
            }
            if openvino:
                impls["OpenVINO u8 (stateful SDPA)"] = (
                    "u8", lambda: openvino.prepare("decode_gqa", {"q": q, "k": k, "v": v, "kv_length": kv_length},
                                                   threads))
                impls["OpenVINO u8 g32 (stateful SDPA)"] = (
                    "OpenVINO u8 g32", lambda: openvino_g32.prepare(
                        "decode_gqa", {"q": q, "k": k, "v": v, "kv_length": kv_length}, threads))
            for name, (cache, make) in impls.items():
                try:
                    call = make()
                except Unsupported as e:
                    print(f"  {name}: unsupported: {e}")
                    continue
                out = run_once(call, repeat=2).astype(np.float64)
                error = float(np.abs(out - ref).max())
                seconds = time_batch(call, before=getattr(call, "before", None))
                gbs = (cache_bytes[cache] + q.nbytes * 2) / seconds / 1e9
                row = {"shape": label, "B": B, "Lq": Lq, "Lk": Lk, "threads": threads, "impl": name, "cache": cache,
                       "ms": seconds * 1e3, "gbs": gbs, "fraction_of_bandwidth": gbs / bandwidth[threads],
                       "error": error, "relative_error": error / (1 + top),
                       "q8_0_error": float(np.abs(q8 - ref).max())}
                rows.append(row)
                print(f"{label:14} B={B} Lq={Lq} Lk={Lk:5} t={threads} {name:28} {seconds * 1e3:8.3f} ms "
                      f"{gbs:6.1f} GB/s ({100 * row['fraction_of_bandwidth']:5.1f} %)  error vs float64 "
                      f"{error:.2e} (q8_0 {row['q8_0_error']:.2e})", flush=True)
                del call
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "results.json"), "w") as f:
            json.dump({"read_bandwidth_gbs": bandwidth, "rows": rows}, f, indent=1)


def _ours_16(attnforge, q, k, v, kv_length, threads):
    import torch
    kb, vb = torch.from_numpy(k).to(torch.bfloat16), torch.from_numpy(v).to(torch.bfloat16)
    qb = torch.from_numpy(q).to(torch.bfloat16)
    n = torch.from_numpy(kv_length)
    return lambda: attnforge.run("decode", q=qb, k=kb, v=vb, kv_length=n, threads=threads).float()


if __name__ == "__main__":
    main()
