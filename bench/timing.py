"""The timing protocol every implementation of the benchmark is measured with (attention_bench.py, and
decode_peers.py's demo): one warm-up call, then calls until `min_calls` calls and `min_seconds`, the
median; `before` (if given) runs before every call, outside the timed region."""
import statistics
import time


def time_batch(call, min_calls=3, min_seconds=0.5, before=None):
    """Median seconds of call()."""
    before = before or (lambda: None)
    before()
    call()  # warm-up
    times, start = [], time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < min_seconds:
        before()
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
