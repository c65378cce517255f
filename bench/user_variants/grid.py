#!/usr/bin/env python3
"""The user-variant grid: attention variants written as lambdas (bench/user_variants/user_variants.hpp), their
attnforge kernels against the built-in mask that means the same (where one exists), against the same kernel
without its score modifier, and against FlexAttention with the same mask_mod and score_mod; outputs checked
first, every implementation against a float64 NumPy reference.

Semantics (user_variants.hpp): q (1, 8, L, 64), k and v (1, 1, L, 64) float32 (multi-query: one K/V head for the
8 query heads), scale 1/8, query i and key j top-left aligned:
  lambda_causal, builtin_causal   j <= i
  lambda_window, builtin_window   j <= i and i - j <= 256
  lambda_chunked                  j <= i and floor(i / 256) == floor(j / 256)
  lambda_global_window            j <= i and (j < 64 or i - j <= 256)
  lambda_dilated                  j <= i and i - j <= 512 and (i - j) even
  lambda_prefix                   j <= i or j < prefix_length[b] (int32 (B), 512 here: read at b, no pre-pass)
  lambda_runtime_window           the window, its length 256 an int32 scalar input
  lambda_runtime_softcap          the soft-cap, its cap 20 a float32 scalar input
  lambda_t5_bias                  window; score -> 20 tanh((score + bucket_bias[h, bucket(i - j)]) / 20), T5's causal
                                  buckets (32: exact below 16, logarithmic to 128), bucket_bias (8, 32) float32
  lambda_alibi                    causal; score - 2^-(h+1) |i - j|
  lambda_softcap                  causal; 20 tanh(score / 20)
  lambda_key_penalty              causal; score - log(j + 1) / 4

attnforge is timed by its own command built over these kernels (attnforge_user_variants bench: median of calls
over 0.5 s), FlexAttention by bench/timing.py's protocol (torch.compile, the block mask built once from the
mask_mod, as bench/flex_peers.py does; a fallback to eager is detected and reported).

  .venv/bin/python bench/user_variants/grid.py --attnforge build/bench/user_variants/attnforge_user_variants
  (bench/run --user builds it and runs this)
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from flex_peers import Flex, _FallbackWatch  # noqa: E402
from timing import time_batch  # noqa: E402

HQ, E, SCALE = 8, 64, 1 / 8
WINDOW, CHUNK, GLOBALS, CAP, PREFIX = 256, 256, 64, 20.0, 512

# name: (mask, modifier, the built-in of the same meaning or None, the same kernel without its modifier or None)
VARIANTS = {
    "lambda_causal": ("causal", None, "builtin_causal", None),
    "lambda_window": ("window", None, "builtin_window", None),
    "lambda_runtime_window": ("window", None, "builtin_window", None),
    "lambda_chunked": ("chunked", None, None, None),
    "lambda_global_window": ("global_window", None, None, None),
    "lambda_dilated": ("dilated", None, None, None),
    "lambda_prefix": ("prefix", None, None, None),
    "lambda_t5_bias": ("window", "t5_bias", None, "lambda_window"),
    "lambda_alibi": ("causal", "alibi", None, "lambda_causal"),
    "lambda_softcap": ("causal", "softcap", None, "lambda_causal"),
    "lambda_runtime_softcap": ("causal", "softcap", "lambda_softcap", "lambda_causal"),
    "lambda_key_penalty": ("causal", "key_penalty", None, "lambda_causal"),
}
BUILTINS = {"builtin_causal": ("causal", None), "builtin_window": ("window", None)}


def mask_of(mask, i, j, xp):
    """The mask on index arrays i, j (NumPy or torch: the same operators)."""
    causal = j <= i
    if mask == "causal":
        return causal
    if mask == "window":
        return causal & (i - j <= WINDOW)
    if mask == "chunked":
        return causal & (i // CHUNK == j // CHUNK)
    if mask == "global_window":
        return causal & ((j < GLOBALS) | (i - j <= WINDOW))
    if mask == "dilated":
        return causal & (i - j <= 2 * WINDOW) & ((i - j) % 2 == 0)
    if mask == "prefix":
        return causal | (j < PREFIX)
    raise ValueError(mask)


def t5_bucket(d, xp):
    """T5's causal bucket of distance d >= 0 (integers): d below 16, else 16 + floor(log(d / 16) / log 8 · 16),
    at most 31. (log of d below 16 is never taken: the clamp only keeps it finite.)"""
    far = 16 + xp.floor(xp.log(xp.clip(d, 16, None) / 16.0) / math.log(8.0) * 16)
    return xp.where(d < 16, d, xp.clip(far, None, 31))


def modify_np(modifier, s, h, i, j, table):
    if modifier is None:
        return s
    if modifier == "alibi":
        return s - 2.0 ** -(h + 1) * np.abs(i - j)
    if modifier == "softcap":
        return CAP * np.tanh(s / CAP)
    if modifier == "key_penalty":
        return s - np.log(j + 1.0) / 4
    if modifier == "t5_bias":
        d = i - j
        return CAP * np.tanh((s + table[h, t5_bucket(d, np).astype(np.int64).clip(0, 31)]) / CAP)
    raise ValueError(modifier)


def make_inputs(L, rng):
    return {"q": rng.standard_normal((1, HQ, L, E), dtype=np.float32),
            "k": rng.standard_normal((1, 1, L, E), dtype=np.float32),
            "v": rng.standard_normal((1, 1, L, E), dtype=np.float32),
            "bucket_bias": rng.standard_normal((HQ, 32), dtype=np.float32), **index_inputs()}


def index_inputs():
    """The inputs that set a mask or modifier's parameters (the same at every size)."""
    return {"prefix_length": np.full((1,), PREFIX, dtype=np.int32), "window": np.array(WINDOW, dtype=np.int32),
            "cap": np.array(CAP, dtype=np.float32)}


def reference(name, inputs):
    mask, modifier = (VARIANTS.get(name) or BUILTINS[name])[:2]
    q, k, v = (inputs[n].astype(np.float64) for n in ("q", "k", "v"))
    L = q.shape[2]
    i, j = np.arange(L)[:, None], np.arange(L)[None, :]
    keep = mask_of(mask, i, j, np)
    out = np.zeros_like(q)
    for h in range(HQ):
        s = modify_np(modifier, q[0, h] @ k[0, 0].T * SCALE, h, i, j, inputs["bucket_bias"])
        s = np.where(keep, s, -np.inf)
        m = s.max(axis=1, keepdims=True)
        p = np.exp(s - m)
        out[0, h] = p / p.sum(axis=1, keepdims=True) @ v[0, 0]
    return out


def live_fraction(mask, L, rows=512):
    kept = 0
    j = np.arange(L)[None, :]
    for first in range(0, L, rows):
        i = np.arange(first, min(first + rows, L))[:, None]
        kept += int(mask_of(mask, i, j, np).sum())
    return kept / (L * L)


def inputs_used(name):
    extra = {"lambda_t5_bias": ("bucket_bias",), "lambda_prefix": ("prefix_length",),
             "lambda_runtime_window": ("window",), "lambda_runtime_softcap": ("cap",)}.get(name, ())
    return ("q", "k", "v") + extra


class Ours:
    def __init__(self, exe):
        self.exe = exe

    def output(self, name, inputs):
        with tempfile.TemporaryDirectory() as tmp:
            args = [self.exe, "run", name, "--threads", "1", "--output", os.path.join(tmp, "out.npy")]
            for n in inputs_used(name):
                np.save(os.path.join(tmp, n + ".npy"), inputs[n])
                args += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
            subprocess.run(args, capture_output=True, text=True, check=True)
            return np.load(os.path.join(tmp, "out.npy")).astype(np.float64)

    def ms(self, name, L, threads):
        """{threads: median ms} of the streaming kernel at batch 1, sequence L (q, k, v synthetic; the parameters
        as index_inputs gives them)."""
        args = [self.exe, "bench", name, "--length", str(L), "--threads", ",".join(map(str, threads)),
                "--strategy", "streaming", "--no-interpreter", "--json"]
        with tempfile.TemporaryDirectory() as tmp:
            for n, value in index_inputs().items():
                if n in inputs_used(name):
                    np.save(os.path.join(tmp, n + ".npy"), value)
                    args += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
            out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        rows = json.loads(out[out.index("\n[") + 1:])  # the table, then the rows as a JSON array
        return {r["threads"]: r["ms"] for r in rows if r["engine"].endswith("__streaming")}


class FlexUser(Flex):
    """FlexAttention over the user variants: mask_mod and score_mod as above, the block mask built once per
    (variant, L), K and V of one head shared by the 8 query heads (enable_gqa)."""

    def user_mods(self, name, inputs):
        torch = self.torch
        mask, modifier = VARIANTS[name][:2]
        table = torch.from_numpy(np.ascontiguousarray(inputs["bucket_bias"]))
        score_mod = None
        if modifier == "alibi":
            score_mod = lambda s, b, h, i, j: s - torch.exp2(-(h + 1).float()) * (i - j).abs()
        elif modifier == "softcap":
            score_mod = lambda s, b, h, i, j: CAP * torch.tanh(s / CAP)
        elif modifier == "key_penalty":
            score_mod = lambda s, b, h, i, j: s - torch.log(j + 1.0) / 4
        elif modifier == "t5_bias":
            score_mod = lambda s, b, h, i, j: CAP * torch.tanh(
                (s + table[h, t5_bucket((i - j).clamp(min=0), torch).long()]) / CAP)  # masked pairs: in range too
        return score_mod, (lambda b, h, i, j: mask_of(mask, i, j, torch))

    def prepare_user(self, name, inputs, threads, memo):
        torch = self.torch
        torch.set_num_threads(threads)
        L = inputs["q"].shape[2]
        if (name, L) not in memo:
            score_mod, mask_mod = self.user_mods(name, inputs)
            memo[(name, L)] = (score_mod, self.create_block_mask(mask_mod, None, None, L, L, device="cpu"))
        score_mod, block_mask = memo[(name, L)]
        q, k, v = (torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in ("q", "k", "v"))
        flex = self.compiled

        def call():
            with torch.no_grad():
                return flex(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=SCALE, enable_gqa=True)
        with _FallbackWatch() as watch:
            call()
            call()
        call.fallback = "; ".join(watch.seen) or None
        return call


def check_outputs(ours, flex, L=300):
    """Every implementation against reference() at L (no multiple of any block); False if any is off."""
    rng = np.random.default_rng(0)
    inputs = make_inputs(L, rng)
    ok, memo = True, {}
    print(f"check: L = {L}, 1 thread, bound 1e-4 (1 + max|ref|)")
    for name in list(VARIANTS) + list(BUILTINS):
        ref = reference(name, inputs)
        bound = 1e-4 * (1 + np.abs(ref).max())
        got = [("attnforge", ours.output(name, inputs))]
        if flex and name in VARIANTS:
            call = flex.prepare_user(name, inputs, 1, memo)
            got.append(("FlexAttention", call().numpy().astype(np.float64)))
            if call.fallback:
                ok = False
                print(f"  {name:22} FlexAttention FELL BACK TO EAGER: {call.fallback}")
        for who, out in got:
            err = float(np.abs(out - ref).max())
            ok &= err <= bound
            print(f"  {name:22} {who:14} {'ok' if err <= bound else 'FAILED'} err {err:.1e} (bound {bound:.1e})")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnforge", help="the attnforge_user_variants command (required unless --table)")
    ap.add_argument("--lengths", default="2048,8192")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--no-flex", action="store_true")
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--table", help="only print the table of rows written by --out")
    args = ap.parse_args()
    if args.table:
        with open(args.table) as f:
            return print_table(json.load(f))
    if not args.attnforge:
        ap.error("--attnforge is required")
    lengths = [int(x) for x in args.lengths.split(",")]
    threads = [int(x) for x in args.threads.split(",")]
    names = args.variants.split(",")
    ours = Ours(args.attnforge)
    flex = None if args.no_flex else FlexUser()
    if not check_outputs(ours, flex):
        sys.exit("outputs differ from the reference: no timing")

    rows, memo = [], {}
    timed = {}
    for name in names:
        mask, modifier, builtin, base = VARIANTS[name]
        for L in lengths:
            for who in filter(None, (name, builtin, base)):
                if (who, L) not in timed:
                    timed[(who, L)] = ours.ms(who, L, threads)
            inputs = make_inputs(L, np.random.default_rng(1)) if flex else None
            live = live_fraction(mask, L)
            for t in threads:
                row = {"variant": name, "L": L, "threads": t, "live": live, "ms": timed[(name, L)][t]}
                if builtin:
                    row["builtin_ms"] = timed[(builtin, L)][t]
                if base:
                    row["base_ms"] = timed[(base, L)][t]
                if flex:
                    call = flex.prepare_user(name, inputs, t, memo)
                    row["flex_ms"] = time_batch(call) * 1e3
                    row["flex_fallback"] = call.fallback
                    del call
                rows.append(row)
                print(json.dumps(row), flush=True)

    print_table(rows)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


def print_table(rows):
    """The rows as a Markdown table. ns per live score: the time over the live (query, key) pairs of all heads,
    constant across L when only live blocks cost."""
    print()
    print("| variant | L | threads | live pairs | attnforge ms | ns per live score | vs built-in "
          "| vs without modifier | FlexAttention ms | speed-up |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        vs_builtin = f"{r['ms'] / r['builtin_ms']:.2f}×" if "builtin_ms" in r else ""
        vs_base = f"{r['ms'] / r['base_ms']:.2f}×" if "base_ms" in r else ""
        flex_ms = f"{r['flex_ms']:.1f}" if "flex_ms" in r else ""
        speedup = f"{r['flex_ms'] / r['ms']:.2f}×" if "flex_ms" in r else ""
        per_score = r["ms"] * 1e6 / (r["live"] * r["L"] ** 2 * HQ)
        print(f"| {r['variant']} | {r['L']} | {r['threads']} | {100 * r['live']:.1f} % | {r['ms']:.2f} "
              f"| {per_score:.2f} | {vs_builtin} | {vs_base} | {flex_ms} | {speedup} |")


if __name__ == "__main__":
    main()
