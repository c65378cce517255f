"""The timing protocol every implementation of the benchmark is measured with (attention_bench.py, and
decode_peers.py's demo): one warm-up call, then calls until `min_calls` calls and `min_seconds`, the
median; `before` (if given) runs before every call, outside the timed region. Each batch starts after a pause
(`settle_seconds`): the previous implementation's worker threads may still be spinning for work and would take
a core from this one (measured: ONNX Runtime's intra-op pool spins ~50 ms after its last call, and attnforge's
two-thread decode calls after it took 4.1-6.0 ms instead of 3.6-3.8 until it stopped, bench/peer_spin.py; PyTorch is run with
OMP_WAIT_POLICY=PASSIVE for the same reason)."""
import statistics
import time


SETTLE_SECONDS = 0.2  # four times the longest spin measured


def settle(seconds=SETTLE_SECONDS):
    """Wait until other implementations' idle worker threads have stopped spinning."""
    time.sleep(seconds)


def time_batch(call, min_calls=3, min_seconds=0.5, before=None, settle_seconds=SETTLE_SECONDS):
    """Median seconds of call()."""
    before = before or (lambda: None)
    settle(settle_seconds)
    before()
    call()  # warm-up
    times, start = [], time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < min_seconds:
        before()
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
