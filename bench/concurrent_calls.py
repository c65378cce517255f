#!/usr/bin/env python3
"""Calls per second with N callers at once, each call on T threads: attnforge against PyTorch's SDPA and
ONNX Runtime, from the same number of Python threads (docs/design.md, "Threads").

Cells (float32, one Python thread per caller, all callers on the same inputs, which are only read):
  prefill  sdpa,   B = 1, H = 8, E = 64, L = 1024
  decode   decode, B = 1, H = 8, E = 64, one query over Lk = 4096 keys (16.8 MB of cache)
  decode_long  the same over Lk = 131072 (537 MB: beyond the last-level cache)
attnforge: a kernel bound once with `attnforge.kernel(..., threads=T)`, writing into each caller's own out=
(the GIL is released while the kernel runs). PyTorch: `F.scaled_dot_product_attention` with
`torch.set_num_threads(T)` (torch's count is per process; every caller's OpenMP team has T threads).
ONNX Runtime: one session per caller with `intra_op_num_threads = T` (the opset-23 Attention operator, as
bench/peers.py). Outputs are checked against each other first.

For each (cell, T, N): the callers start together and call for --seconds; reported are calls per second (all
callers together) and the median time of one call, each the median of --rounds rounds over the whole table, and
"÷ alone": that time over one caller's alone at the same T (1.0: the calls overlap perfectly; N: they run one after another). Decode cells also give the GB
read per second (the cache's bytes times calls per second) against the read-bandwidth probe of
`attnforge bench` on min(N·T, cores) threads, measured in the same run. The core count is printed first.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/concurrent_calls.py [--build build] [--callers 1,2,3,4]
        [--threads 1,2] [--cells prefill,decode,decode_long] [--peers torch,ort] [--seconds 1.5] [--rounds 3]
        [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import settle  # noqa: E402

CELLS = {
    "prefill": {"variant": "sdpa", "B": 1, "H": 8, "E": 64, "Lq": 1024, "Lk": 1024},
    "decode": {"variant": "decode", "B": 1, "H": 8, "E": 64, "Lq": 1, "Lk": 4096},
    "decode_long": {"variant": "decode", "B": 1, "H": 8, "E": 64, "Lq": 1, "Lk": 131072},
}


def inputs_of(cell, rng):
    q = rng.uniform(-1, 1, (cell["B"], cell["H"], cell["Lq"], cell["E"])).astype(np.float32)
    k, v = (rng.uniform(-1, 1, (cell["B"], cell["H"], cell["Lk"], cell["E"])).astype(np.float32) for _ in range(2))
    inputs = {"q": q, "k": k, "v": v}
    if cell["variant"] == "decode":
        inputs["kv_length"] = np.full((cell["B"],), cell["Lk"], dtype=np.int32)
    return inputs


def cache_bytes(cell):
    return 2 * 4 * cell["B"] * cell["H"] * cell["Lk"] * cell["E"]


class Attnforge:
    name = "attnforge"

    def __init__(self, attnforge):
        self.af = attnforge

    def caller(self, cell, inputs, threads):
        """A function making one call, for one caller (its own output)."""
        sizes = {"B": cell["B"], "H": cell["H"], "Hkv": cell["H"], "E": cell["E"], "Lq": cell["Lq"], "Lkv": cell["Lk"]}
        bound = self.af.kernel(cell["variant"], threads=threads, **sizes)
        out = np.empty(bound.output_shape, np.float32)
        return lambda: bound(out=out, **inputs)


class Torch:
    name = "PyTorch SDPA"

    def __init__(self):
        import torch
        self.torch = torch

    def caller(self, cell, inputs, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        q, k, v = (torch.from_numpy(inputs[n]) for n in ("q", "k", "v"))
        sdpa = torch.nn.functional.scaled_dot_product_attention

        def call():
            with torch.inference_mode():
                return sdpa(q, k, v)
        return call


class OnnxRuntime:
    name = "ONNX Runtime"

    def __init__(self):
        import onnxruntime
        from onnx import TensorProto, helper
        self.ort, self.TensorProto, self.helper = onnxruntime, TensorProto, helper

    def caller(self, cell, inputs, threads):
        helper, TensorProto = self.helper, self.TensorProto
        feeds = {n: inputs[n] for n in ("q", "k", "v")}
        graph_inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in feeds.items()]
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        graph = helper.make_graph([helper.make_node("Attention", ["q", "k", "v"], ["y"])], "attention",
                                  graph_inputs, [out])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        session = self.ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return lambda: session.run(None, feeds)[0]


def measure(make_callers, callers, seconds):
    """Starts `callers` Python threads together, each calling its own function for `seconds`; returns (calls per
    second of all together, median seconds of one call)."""
    calls = make_callers(callers)
    for c in calls:
        c()  # warm-up, one after another
    settle()
    start = threading.Barrier(callers + 1)
    times = [[] for _ in range(callers)]
    stop_at = [0.0]

    def work(i):
        start.wait()
        while True:
            t0 = time.perf_counter()
            if t0 >= stop_at[0]:
                return
            calls[i]()
            times[i].append(time.perf_counter() - t0)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    stop_at[0] = time.perf_counter() + seconds
    start.wait()
    begun = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - begun
    done = sum(len(t) for t in times)
    return done / elapsed, statistics.median(x for t in times for x in t)


def read_bandwidth(exe, threads):
    """The read-bandwidth probe of `attnforge bench` (GB/s, fastest of its passes) on `threads` threads."""
    args = [exe, "bench", "decode", "--heads", "1", "--length", "64", "--lq", "1", "--threads", str(threads),
            "--no-interpreter", "--json", "--chosen-only", "--min-seconds", "0.05"]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(r.stdout[r.stdout.index("\n[") + 1:])[0]["read_bandwidth_fastest_gbs"]


def check_outputs(impls, cell, inputs):
    results = {impl.name: np.asarray(impl.caller(cell, inputs, 1)()) for impl in impls}
    base = results["attnforge"]
    for name, r in results.items():
        err = float(np.abs(r.reshape(base.shape) - base).max())
        assert err <= 1e-4, f"{cell['variant']}: {name} differs from attnforge by {err}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--callers", default="1,2,3,4")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--cells", default="prefill,decode,decode_long")
    p.add_argument("--peers", default="torch,ort")
    p.add_argument("--seconds", type=float, default=1.5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json")
    a = p.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import attnforge
    exe = os.path.join(a.build, "tools", "attnforge", "attnforge")
    cores = os.cpu_count()
    print(f"{cores} cores ({os.uname().machine}); {a.seconds} s per measurement, medians of {a.rounds} rounds")
    impls = [Attnforge(attnforge)]
    peers = [x for x in a.peers.split(",") if x]
    impls += [Torch()] if "torch" in peers else []
    impls += [OnnxRuntime()] if "ort" in peers else []
    callers_list = [int(x) for x in a.callers.split(",")]
    threads_list = [int(x) for x in a.threads.split(",")]
    bandwidth = {n: read_bandwidth(exe, n) for n in sorted({min(c * t, cores) for c in callers_list
                                                             for t in threads_list})}
    print("read bandwidth probe, GB/s:", ", ".join(f"{n} threads {g:.1f}" for n, g in bandwidth.items()))
    rng = np.random.default_rng(0)
    rows = []
    for cell_name in a.cells.split(","):
        cell = CELLS[cell_name]
        inputs = inputs_of(cell, rng)
        check_outputs(impls, cell, inputs)
        memory_bound = cell["variant"] == "decode"
        print(f"\n{cell_name}: {cell['variant']} B={cell['B']} H={cell['H']} E={cell['E']} Lq={cell['Lq']} "
              f"Lk={cell['Lk']}" + (f", {cache_bytes(cell) / 1e6:.1f} MB of cache per call" if memory_bound else ""))
        print(f"{'T':>2} {'N':>2} {'implementation':<16} {'calls/s':>9} {'ms/call':>9} {'÷ alone':>8}"
              + (f" {'GB/s':>7} {'% probe':>8}" if memory_bound else ""))
        for threads in threads_list:
            # Rounds over the whole (N, implementation) table, the medians kept: the moments of a noisy machine
            # fall on every row alike instead of on one.
            samples = {}
            for _ in range(a.rounds):
                for callers in callers_list:
                    for impl in impls:
                        samples.setdefault((callers, impl.name), []).append(
                            measure(lambda n: [impl.caller(cell, inputs, threads) for _ in range(n)], callers,
                                    a.seconds))
            alone = {}
            for callers in callers_list:
                for impl in impls:
                    taken = samples[(callers, impl.name)]
                    rate = statistics.median(r for r, _ in taken)
                    median = statistics.median(m for _, m in taken)
                    if callers == 1:
                        alone[impl.name] = median
                    over = median / alone[impl.name] if impl.name in alone else float("nan")
                    row = {"cell": cell_name, **cell, "threads": threads, "callers": callers, "cores": cores,
                           "implementation": impl.name, "calls_per_second": rate, "ms_per_call": 1e3 * median,
                           "over_alone": over}
                    line = f"{threads:>2} {callers:>2} {impl.name:<16} {rate:>9.1f} {1e3 * median:>9.3f} {over:>8.2f}"
                    if memory_bound:
                        gbs = rate * cache_bytes(cell) / 1e9
                        probe = bandwidth[min(callers * threads, cores)]
                        row.update(gbs=gbs, read_bandwidth_gbs=probe, fraction_of_bandwidth=gbs / probe)
                        line += f" {gbs:>7.1f} {100 * gbs / probe:>7.0f}%"
                    print(line, flush=True)
                    rows.append(row)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cores": cores, "read_bandwidth_gbs": bandwidth, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
