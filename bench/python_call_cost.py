#!/usr/bin/env python3
"""What a call through the Python module (python/) costs over the same kernel called from C++.

For sdpa (B = 1, H = 8, E = 64) at L = 128, 512, 2048 and mha (B = 1, D = 512) at L = 128, one thread:
`attnforge bench --json` (C++, the rule's kernel, its own median) against the module in this process, timed
with bench/timing.py's time_batch (the function the peers are timed with): a bound kernel writing into out=
(no allocation) and attnforge.run() (look-up, checks and a fresh result every call). Outputs are compared with
the C++ run first. Prints a table; --json writes the rows.

    .venv/bin/python bench/python_call_cost.py [--build build] [--json FILE] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import time_batch  # noqa: E402

CELLS = [("sdpa", 128), ("sdpa", 512), ("sdpa", 2048), ("mha", 128)]


def cpp_ms(exe, variant, length):
    args = [exe, "bench", variant, "--length", str(length), "--threads", "1", "--no-interpreter", "--json",
            "--repeats", "3", "--min-seconds", "0.5", "--chosen-only"]
    args += ["--heads", "8"] if variant == "sdpa" else []
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    rows = json.loads(r.stdout[r.stdout.index("\n[") + 1:])
    return rows[0]["ms"], rows[0]["engine"]


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
    a = p.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import attnforge
    exe = os.path.join(a.build, "tools", "attnforge", "attnforge")
    rng = np.random.default_rng(0)
    rows = []
    for variant, length in CELLS:
        inputs = inputs_of(variant, length, rng)
        sizes = {"B": 1, "H": 8, "Lq": length, "Lkv": length} if variant == "sdpa" else {"B": 1, "Lx": length}
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
    print(f"{'cell':<12} {'kernel':<32} {'C++ ms':>9} {'kernel(out=) ms':>16} {'run() ms':>10} {'÷ C++':>14}")
    for r in rows:
        print(f"{r['variant'] + ' ' + str(r['L']):<12} {r['kernel']:<32} {r['cpp_ms']:>9.4f} {r['bound_out_ms']:>16.4f} "
              f"{r['run_ms']:>10.4f} {r['bound_out_over_cpp']:>6.3f}/{r['run_over_cpp']:.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
