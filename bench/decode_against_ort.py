#!/usr/bin/env python3
"""One decode cell, attnforge (its Python module) against ONNX Runtime's GroupQueryAttention in one process on the
same NumPy arrays (both read the cache in NumPy's huge pages), alternated: `rounds` times 20 calls of each, medians,
which goes first swapped every round, each block after a pause (bench/timing.py: ONNX Runtime's idle workers spin
~50 ms after its last call and would take a core from the block after it). docs/performance.md, "What bounds
performance now".

usage: bench/decode_against_ort.py B LQ LK THREADS [VARIANT=decode] [ROUNDS=3] [LAYERS=1]   (from the repository
root, after a build with the Python module in build/python and the peers of bench/requirements.txt; 12-30 rounds
tell a 5 % difference on a shared machine)

LAYERS > 1 gives each implementation that many caches of their own (different random values), which consecutive
calls take in turn, as a model's layers would: a cache is then read again only after LAYERS - 1 others, so no call
finds what the one before it left in the last-level cache (with one cache of 134 MB and a 32 MB L3, back-to-back
calls can: how much they gain depends on the order each implementation reads the cache in)."""
import itertools
import os
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "build", "python")]
import attnforge  # noqa: E402
import decode_peers  # noqa: E402
from timing import settle  # noqa: E402


def median_ms(call, calls=20):
    settle()
    call()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def in_turn(calls):
    """One call that makes the next of `calls` each time, round robin."""
    turn = itertools.cycle(calls)
    return lambda: next(turn)()


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    B, Lq, Lk, threads = (int(a) for a in sys.argv[1:5])
    variant = sys.argv[5] if len(sys.argv) > 5 else "decode"
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    layers = int(sys.argv[7]) if len(sys.argv) > 7 else 1
    if layers < 1:
        sys.exit(f"LAYERS must be at least 1, got {layers}")
    rng = np.random.default_rng(0)
    ort_calls, our_calls = [], []
    peer = decode_peers.OnnxRuntime()
    for _ in range(layers):
        inputs = decode_peers.make_inputs(variant, B, Lq, Lk, [Lk] * B, rng)
        # Every cache bound to the first one's session: one thread pool.
        ort = peer.prepare(variant, inputs, threads, session=ort_calls[0].session if ort_calls else None)
        ours = lambda inputs=inputs: attnforge.run(variant, threads=threads, **inputs)  # noqa: E731
        reference = decode_peers.decode_reference(inputs["q"], inputs["k"], inputs["v"], inputs["kv_length"])
        for name, call in (("ONNX Runtime", ort), ("attnforge", ours)):
            c = decode_peers.check(decode_peers.run_once(call), reference)
            if not c["ok"]:
                sys.exit(f"{name}: output differs from the float64 reference: {c}")
        ort_calls.append(ort)
        our_calls.append(ours)
    ort, ours = in_turn(ort_calls), in_turn(our_calls)
    cache = inputs["k"].nbytes + inputs["v"].nbytes
    ratios = []
    for r in range(rounds):
        if r % 2 == 0:
            a, b = median_ms(ort), median_ms(ours)
        else:
            b, a = median_ms(ours), median_ms(ort)
        print(f"ORT {a:.3f} ms {cache / a / 1e6:.1f} GB/s   attnforge {b:.3f} ms {cache / b / 1e6:.1f} GB/s   "
              f"ORT / attnforge {a / b:.2f}", flush=True)
        ratios.append(a / b)
    # The memory of a shared machine changes speed from second to second: the ratio of a round's two blocks
    # (a second apart at most) is what compares them, its median over the rounds the answer.
    q1, q2, q3 = np.percentile(ratios, [25, 50, 75])
    print(f"ORT / attnforge over {rounds} rounds: median {q2:.3f} (quartiles {q1:.3f}-{q3:.3f}); attnforge faster in "
          f"{sum(x > 1 for x in ratios)} of {rounds}")


if __name__ == "__main__":
    main()
