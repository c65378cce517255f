#!/usr/bin/env python3
"""What a call through the Python module (python/) costs over the same kernel called from C++.

For sdpa (B = 1, H = 8, E = 64) at L = 128, 512, 2048 and mha (B = 1, D = 512) at L = 128, one thread:
`attnforge bench --json` (C++, the rule's kernel, its own median) against the module in this process, timed
with bench/timing.py's time_batch (the function the peers are timed with): a bound kernel writing into out=
(no allocation) and attnforge.run() (look-up, checks and a fresh result every call). Outputs are compared with
the C++ run first. Then the PyTorch front door at decode sizes (docs/pytorch.md): one layer's attention of
Llama-3-8B (B = 1, Hq = 32, Hkv = 8, E = 128, one query over 512 keys, float32 torch tensors),
`attnforge.torch.scaled_dot_product_attention(q, k, v, enable_gqa=True)` against the same kernel bound once and
called on NumPy views of the same memory with out= (`attnforge.kernel`: the least a Python call can add), and
from C++ (`attnforge bench decode`, whose protocol reads the cache cold between calls: a different number), on 1
and 2 threads, with torch's own SDPA beside it; and, on the same front-door calls, the time of the kernel call
inside each (the C++ runtime's evaluate_into, timed by the extension): the call ÷ its kernel, per call, is what
the Python call adds (docs/pytorch.md). Prints tables; --json writes the rows.

    .venv/bin/python bench/python_call_cost.py [--build build] [--json FILE] [--rounds 3] [--no-front-door]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import settle, time_batch  # noqa: E402

CELLS = [("sdpa", 128), ("sdpa", 512), ("sdpa", 2048), ("mha", 128)]


def cpp_ms(exe, variant, length):
    args = [exe, "bench", variant, "--length", str(length), "--threads", "1", "--no-interpreter", "--json",
            "--repeats", "3", "--min-seconds", "0.5", "--chosen-only"]
    args += ["--heads", "8"] if variant == "sdpa" else []
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    rows = json.loads(r.stdout[r.stdout.index("\n[") + 1:])
    return rows[0]["ms"], rows[0]["engine"]


FRONT_DOOR = {"B": 1, "Hq": 32, "Hkv": 8, "E": 128, "Lk": 512}  # Llama-3-8B's layer, a 512-token context


def kernel_inside_calls(call, last_call, min_calls=200, min_seconds=0.5):
    """Medians over single calls of the front door: its kernel's seconds inside it (the C++ runtime's
    evaluate_into, timed by the extension: last_call()["kernel_seconds"]) and the call's seconds over them, per
    call, so that what Python adds is measured on the same calls, not across runs."""
    settle()
    call()
    kernels, ratios = [], []
    start = time.perf_counter()
    while len(ratios) < min_calls or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        call()
        total = time.perf_counter() - t0
        kernels.append(last_call()["kernel_seconds"])
        ratios.append(total / kernels[-1])
    return statistics.median(kernels), statistics.median(ratios)


def front_door_rows(exe, rounds):
    """attnforge.torch's call at decode sizes against its kernel from C++, and torch's SDPA, per thread count."""
    import torch
    import torch.nn.functional as F
    import attnforge
    import attnforge.torch
    c = FRONT_DOOR
    g = torch.Generator().manual_seed(0)
    q = torch.rand(c["B"], c["Hq"], 1, c["E"], generator=g) * 2 - 1
    k, v = (torch.rand(c["B"], c["Hkv"], c["Lk"], c["E"], generator=g) * 2 - 1 for _ in range(2))
    ours = attnforge.torch.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    theirs = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    err = (ours - theirs).abs().max().item()
    assert err <= 1e-4, f"front door: {err} from torch's SDPA"
    rows = []
    for threads in (1, 2):
        attnforge.set_default_threads(threads)
        torch.set_num_threads(threads)
        bound = attnforge.kernel("decode", threads=threads, B=c["B"], H=c["Hq"], Hkv=c["Hkv"], E=c["E"], Lq=1,
                                 Lkv=c["Lk"])
        views = {"q": q.numpy(), "k": k.numpy(), "v": v.numpy(),
                 "kv_length": np.full((c["B"],), c["Lk"], dtype=np.int32)}
        out = np.empty(bound.output_shape, np.float32)
        cpp, kernel, front, sdpa, inside, over_inside = [], [], [], [], [], []
        for _ in range(rounds):
            args = [exe, "bench", "decode", "--heads", str(c["Hq"]), "--kv-heads", str(c["Hkv"]), "--head-width",
                    str(c["E"]), "--length", str(c["Lk"]), "--lq", "1", "--threads", str(threads), "--no-interpreter",
                    "--json", "--repeats", "3", "--min-seconds", "0.5", "--chosen-only"]
            r = subprocess.run(args, capture_output=True, text=True, check=True)
            measured = json.loads(r.stdout[r.stdout.index("\n[") + 1:])[0]
            cpp.append(measured["ms"])
            kernel.append(1e3 * time_batch(lambda: bound(out=out, **views)))
            front.append(1e3 * time_batch(lambda: attnforge.torch.scaled_dot_product_attention(q, k, v,
                                                                                                enable_gqa=True)))
            sdpa.append(1e3 * time_batch(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)))
            its_kernel, ratio = kernel_inside_calls(
                lambda: attnforge.torch.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                attnforge._native._last_torch_call)
            inside.append(1e3 * its_kernel)
            over_inside.append(ratio)
        row = {"cell": "decode Llama-3-8B Lk=512", "threads": threads, "kernel": measured["engine"],
               "cpp_ms": statistics.median(cpp), "kernel_out_ms": statistics.median(kernel),
               "front_door_ms": statistics.median(front), "torch_sdpa_ms": statistics.median(sdpa),
               "kernel_inside_ms": statistics.median(inside), "call_over_its_kernel": statistics.median(over_inside),
               "tensor_reader": attnforge._native._torch_tensor_reader()}
        row["front_door_over_kernel"] = row["front_door_ms"] / row["kernel_out_ms"]
        rows.append(row)
    attnforge.set_default_threads(0)
    return rows


def inputs_of(variant, length, rng):
    if variant == "sdpa":
        return {n: rng.uniform(-1, 1, (1, 8, length, 64)).astype(np.float32) for n in ("q", "k", "v")}
    t = {"x": rng.uniform(-1, 1, (1, length, 512)).astype(np.float32)}
    t.update({w: (rng.uniform(-1, 1, (512, 512)) / 16).astype(np.float32) for w in ("wq", "wk", "wv", "wo")})
    return t


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--rounds", type=int, default=3, help="rounds, round-robin; medians reported")
    p.add_argument("--no-front-door", action="store_true", help="leave out the PyTorch front door's cells")
    p.add_argument("--front-door-only", action="store_true", help="only the PyTorch front door's cells")
    a = p.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import attnforge
    exe = os.path.join(a.build, "tools", "attnforge", "attnforge")
    rng = np.random.default_rng(0)
    rows = []
    for variant, length in ([] if a.front_door_only else CELLS):
        inputs = inputs_of(variant, length, rng)
        sizes = {"B": 1, "H": 8, "Hkv": 8, "E": 64, "Lq": length, "Lkv": length} if variant == "sdpa" else {"B": 1, "Lx": length}
        bound = attnforge.kernel(variant, threads=1, **sizes)
        out = np.empty(bound.output_shape, np.float32)
        reference = attnforge.run(variant, engine="interpreter", **inputs) if length <= 512 else None
        bound(out=out, **inputs)
        if reference is not None:
            err = np.abs(out - reference).max()
            assert err <= 1e-4 * (1 + np.abs(reference).max()) + 1e-5, f"{variant} L={length}: error {err}"
        cpp, bound_py, run_py = [], [], []
        for _ in range(a.rounds):
            ms, engine = cpp_ms(exe, variant, length)
            cpp.append(ms)
            bound_py.append(1e3 * time_batch(lambda: bound(out=out, **inputs)))
            run_py.append(1e3 * time_batch(lambda: attnforge.run(variant, threads=1, **inputs)))
        row = {"variant": variant, "L": length, "kernel": engine, "cpp_ms": statistics.median(cpp),
               "bound_out_ms": statistics.median(bound_py), "run_ms": statistics.median(run_py)}
        row["bound_out_over_cpp"] = row["bound_out_ms"] / row["cpp_ms"]
        row["run_over_cpp"] = row["run_ms"] / row["cpp_ms"]
        rows.append(row)
    if rows:
        print(f"{'cell':<12} {'kernel':<32} {'C++ ms':>9} {'kernel(out=) ms':>16} {'run() ms':>10} {'÷ C++':>14}")
    for r in rows:
        print(f"{r['variant'] + ' ' + str(r['L']):<12} {r['kernel']:<32} {r['cpp_ms']:>9.4f} {r['bound_out_ms']:>16.4f} "
              f"{r['run_ms']:>10.4f} {r['bound_out_over_cpp']:>6.3f}/{r['run_over_cpp']:.3f}")
    if not a.no_front_door:
        front = front_door_rows(exe, a.rounds)
        print(f"\n{'cell':<26} {'thr':>3} {'kernel':<30} {'C++ ms':>8} {'kernel(out=) ms':>16} "
              f"{'attnforge.torch ms':>19} {'÷ kernel':>9} {'its kernel ms':>14} {'÷ its kernel':>13} "
              f"{'torch SDPA ms':>14}")
        for r in front:
            print(f"{r['cell']:<26} {r['threads']:>3} {r['kernel']:<30} {r['cpp_ms']:>8.4f} {r['kernel_out_ms']:>16.4f} "
                  f"{r['front_door_ms']:>19.4f} {r['front_door_over_kernel']:>9.3f} {r['kernel_inside_ms']:>14.4f} "
                  f"{r['call_over_its_kernel']:>13.3f} {r['torch_sdpa_ms']:>14.4f}")
        print("its kernel: the C++ runtime's call inside the same front-door calls (evaluate_into, timed by the "
              "extension); ÷ its kernel: per call, the median: what the Python call adds; tensors read through "
              f"{front[0]['tensor_reader']} (ATTNFORGE_TORCH_TENSORS=attributes: their Python attributes)")
        rows += front
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
