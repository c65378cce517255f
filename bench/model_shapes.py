"""The attention shapes of real models (docs/contract.md §2: run-time H, Hkv and E), attnforge beside its peers.

Prefill (`sdpa` or `sdpa_causal`, Lq = Lk = L) for each model's head counts and head width, B = 1:
  attnforge   `attnforge bench VARIANT --heads H --kv-heads Hkv --head-width E --chosen-only --json` (C++, the
              kernel the rule picks; it measures the FMA peak in the same run)
  PyTorch     F.scaled_dot_product_attention(q, k, v, is_causal=..., enable_gqa=Hkv < H), torch.set_num_threads
  OpenVINO    opset13 scaled_dot_product_attention on (B, H, L, E) inputs, k and v given with their heads repeated
              to H (the op broadcasts, it does not group; the repeat is outside the timing), f32, latency hint
  FlexAttention  torch.compile(flex_attention, dynamic=False) (bench/flex_peers.py's: a cold Inductor cache, dynamo's
              recompile limit raised, a fall back to eager detected), enable_gqa, a causal block mask built once for
              sdpa_causal; compiled by a first call before timing (--no-flex leaves it out)
Decode (`decode`, Lq = 1 over a full cache of Lk keys, B = 1), --decode: ours by `attnforge bench decode` (% of the
read bandwidth measured between its calls, counted in the bytes a call must read: K and V once per KV head);
PyTorch and OpenVINO as bench/decode_peers.py runs them (PyTorch: a GQA group folded into the query axis, each
KV head read once; OpenVINO: its stateful SDPA with a KV cache, the CPU plugin's fused decode kernel).
Every output is checked first against a float64 reference (PyTorch's math in float64 on the same inputs), within
1e-4·(1 + max|ref|) + the float32 score term of docs/contract.md §5. Times: bench/timing.py's protocol (median).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/model_shapes.py --attnforge build/tools/attnforge/attnforge \
        [--variant sdpa] [--length 2048] [--threads 1,2] [--out results.json]
    ... --decode --length 4096     # decode, Lk = 4096
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timing  # noqa: E402

# (model, H, Hkv, E): the attention shapes of issue "Every model's attention" (docs/performance.md).
MODELS = [
    ("GPT-2", 12, 12, 64),
    ("SmolLM-135M", 9, 3, 64),
    ("Qwen2.5-0.5B", 14, 2, 64),
    ("Qwen2.5-7B", 28, 4, 128),
    ("Llama-3-8B / Mistral-7B", 32, 8, 128),
    ("Phi-2", 32, 32, 80),
    ("Phi-3-mini", 32, 32, 96),
    ("Gemma-2-2B", 8, 4, 256),
]


def reference(q, k, v, causal):
    import torch
    t = [torch.from_numpy(a).to(torch.float64) for a in (q, k, v)]
    group = q.shape[1] // k.shape[1]
    kk, vv = (x.repeat_interleave(group, dim=1) for x in t[1:])
    s = t[0] @ kk.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[2]
        s = s.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, dim=-1) @ vv).numpy(), s.abs().max().item()


def bound(ref, largest_score, v, E):
    return 1e-4 * (1 + np.abs(ref).max()) + 2 * math.sqrt(E) * 2.0 ** -24 * largest_score * np.abs(v).max()


def ours_bench(exe, variant, H, Hkv, E, L, threads):
    lengths = ["--lq", "1", "--lk", str(L)] if variant == "decode" else ["--length", str(L)]
    args = [exe, "bench", variant, "--heads", str(H), "--kv-heads", str(Hkv), "--head-width", str(E), *lengths,
            "--threads", str(threads), "--chosen-only", "--no-interpreter", "--json"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    (row,) = json.loads(out[out.index("\n[") + 1:])
    return row


def torch_peer(q, k, v, causal, threads):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    t = [torch.from_numpy(a) for a in (q, k, v)]
    gqa = q.shape[1] != k.shape[1]

    def call():
        with torch.inference_mode():
            return F.scaled_dot_product_attention(*t, is_causal=causal, enable_gqa=gqa)
    return call


def openvino_peer(q, k, v, causal, threads):
    import openvino as ov
    import openvino.opset13 as ops
    group = q.shape[1] // k.shape[1]
    kk, vv = (np.ascontiguousarray(np.repeat(x, group, axis=1)) for x in (k, v))
    params = [ops.parameter(list(q.shape), ov.Type.f32, name=n) for n in ("q", "k", "v")]
    y = ops.scaled_dot_product_attention(*params, causal=causal)
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": str(threads), "PERFORMANCE_HINT": "LATENCY",
           "NUM_STREAMS": "1"}
    compiled = ov.Core().compile_model(ov.Model([y.output(0)], params, "sdpa"), "CPU", cfg)
    req = compiled.create_infer_request()
    feed = {"q": q, "k": kk, "v": vv}

    def call():
        return req.infer(feed, share_inputs=True)[0]
    call.keep = (compiled, feed)
    return call


def flex_peer(flex, q, k, v, causal, threads):
    import torch
    import flex_peers
    torch.set_num_threads(threads)
    t = [torch.from_numpy(a) for a in (q, k, v)]
    L = q.shape[2]
    block_mask = flex.create_block_mask(lambda b, h, qi, ki: ki <= qi, None, None, L, L, device="cpu") if causal else None
    gqa = q.shape[1] != k.shape[1]

    def call():
        with torch.no_grad():
            return flex.compiled(*t, block_mask=block_mask, enable_gqa=gqa)
    with flex_peers._FallbackWatch() as watch:
        call()  # compiles
        call()
    if watch.seen:
        raise RuntimeError("FlexAttention fell back to eager: " + "; ".join(watch.seen))
    call.keep = (block_mask,)
    return call


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnforge", required=True, help="the attnforge command line tool")
    ap.add_argument("--variant", default="sdpa", choices=["sdpa", "sdpa_causal"])
    ap.add_argument("--decode", action="store_true", help="decode: Lq = 1 over a full cache of --length keys")
    ap.add_argument("--length", type=int, default=2048)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default="", help="comma-separated model names (default: every one)")
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--no-flex", action="store_true", help="leave FlexAttention out (its compiles take minutes)")
    a = ap.parse_args()
    import attnforge
    if a.decode:
        a.variant = "decode"
        import decode_peers
        decoders = {"PyTorch": decode_peers.Torch(), "OpenVINO": decode_peers.OpenVino()}
    causal = a.variant == "sdpa_causal"
    flex = None
    if not a.decode and not a.no_flex:
        import flex_peers
        flex = flex_peers.Flex()
    rows = []
    rng = np.random.default_rng(0)
    models = [m for m in MODELS if not a.models or m[0] in a.models.split(",")]
    measure = "read bandwidth" if a.decode else "FMA peak"
    print(f"{a.variant}, B = 1, L = {a.length}; ms (median); ours: % of the {measure} measured in the same run")
    print(f"{'model':26} {'H/Hkv':>6} {'E':>4} {'thr':>3} {'ours ms':>9} {'% ' + measure[:4]:>7} {'PyTorch':>9} "
          f"{'OpenVINO':>9} {'Flex':>9} {'best peer / ours':>16}")
    for name, H, Hkv, E in models:
        L = a.length
        q = rng.uniform(-1, 1, (1, H, 1 if a.decode else L, E)).astype(np.float32)
        k = rng.uniform(-1, 1, (1, Hkv, L, E)).astype(np.float32)
        v = rng.uniform(-1, 1, (1, Hkv, L, E)).astype(np.float32)
        ref, largest = reference(q, k, v, causal)
        limit = bound(ref, largest, v, E)
        cache = {"kv_length": np.array([L], np.int32)} if a.decode else {}
        ours_out = attnforge.run(a.variant, q=q, k=k, v=v, **cache)
        errors = {"attnforge": float(np.abs(ours_out - ref).max())}
        for threads in map(int, a.threads.split(",")):
            if a.decode:  # decode_peers folds a GQA group into the query axis under its decode_gqa name
                name_for = "decode_gqa" if H != Hkv else "decode"
                inputs = {"q": q, "k": k, "v": v, **cache}
                peers = {p: d.prepare(name_for, inputs, threads) for p, d in decoders.items()}
            else:
                peers = {"PyTorch": torch_peer(q, k, v, causal, threads),
                         "OpenVINO": openvino_peer(q, k, v, causal, threads)}
                if flex:
                    peers["Flex"] = flex_peer(flex, q, k, v, causal, threads)
            times = {}
            for peer, call in peers.items():
                before = getattr(call, "before", None)  # OpenVINO's stateful decode: its cache state set each call
                if before:
                    before()
                errors[peer] = float(np.abs(np.asarray(call()) - ref).max())
                times[peer] = timing.time_batch(call, before=before) * 1e3 if errors[peer] <= limit else None
            ours = ours_bench(a.attnforge, a.variant, H, Hkv, E, L, threads)
            ok = errors["attnforge"] <= limit
            best = min((t for t in times.values() if t), default=None)
            fmt = lambda t: f"{t:9.3f}" if t else f"{'-' if t == '' else 'wrong':>9}"  # noqa: E731
            fraction = ours["fraction_of_bandwidth"] if a.decode else ours["fraction_of_peak"]
            print(f"{name:26} {H:>3}/{Hkv:<2} {E:>4} {threads:>3} {ours['ms']:9.3f} {100 * fraction:6.1f}% "
                  f"{fmt(times['PyTorch'])} {fmt(times['OpenVINO'])} {fmt(times.get('Flex', ''))} "
                  f"{(best / ours['ms'] if best and ok else float('nan')):15.2f}x", flush=True)
            rows.append({"model": name, "variant": a.variant, "H": H, "Hkv": Hkv, "E": E, "L": L, "threads": threads,
                         "ours_ms": ours["ms"], "ours_fraction_of_peak": ours["fraction_of_peak"],
                         "ours_fraction_of_bandwidth": ours["fraction_of_bandwidth"],
                         "ours_kernel": ours["engine"], "fma_peak_gflops": ours["peak_gflops"],
                         "peers_ms": times, "max_abs_error": dict(errors), "bound": limit})
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
