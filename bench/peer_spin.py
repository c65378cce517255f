#!/usr/bin/env python3
"""Whether a decode peer's idle threads take a core from whatever runs after it in the same process: 20 calls of
the peer, then 30 of ours timed one by one (no pause between), with the CPU time each thread of the process used
meanwhile (/proc/self/task, clock ticks). Why bench/timing.py pauses before every batch (docs/performance.md,
"How it is measured").

usage: bench/peer_spin.py [B=1 LQ=1 LK=32768 THREADS=2]   (from the repository root, after a build with the
Python module in build/python and the peers of bench/requirements.txt; Linux)"""
import glob
import os
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "build", "python")]
import attnforge  # noqa: E402
import decode_peers  # noqa: E402
from timing import settle  # noqa: E402


def thread_ticks():
    """{thread id: user + system clock ticks} of this process."""
    ticks = {}
    for task in glob.glob(f"/proc/{os.getpid()}/task/*"):
        with open(task + "/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
        ticks[os.path.basename(task)] = int(fields[11]) + int(fields[12])
    return ticks


def main():
    B, Lq, Lk, threads = (int(a) for a in (sys.argv[1:5] if len(sys.argv) >= 5 else (1, 1, 32768, 2)))
    inputs = decode_peers.make_inputs("decode", B, Lq, Lk, [Lk] * B, np.random.default_rng(0))
    ours = lambda: attnforge.run("decode", threads=threads, **inputs)  # noqa: E731
    ours()
    for peer in decode_peers.peers():
        call = peer.prepare("decode", inputs, threads)
        settle()
        for _ in range(20):
            call()
        before, ms = thread_ticks(), []
        for _ in range(30):
            t0 = time.perf_counter()
            ours()
            ms.append((time.perf_counter() - t0) * 1e3)
        after = thread_ticks()
        busy = {t: after[t] - before.get(t, 0) for t in after if after[t] - before.get(t, 0) > 0}
        print(f"after {peer.name('decode')}: ours " + " ".join(f"{x:.1f}" for x in ms) + f" ms; ticks by thread {busy}",
              flush=True)


if __name__ == "__main__":
    main()
