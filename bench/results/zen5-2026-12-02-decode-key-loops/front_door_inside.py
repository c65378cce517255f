import sys, os, time, statistics
sys.path.insert(0, os.environ.get("AFPY", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "build", "python")))
import torch, attnforge, attnforge.torch
from attnforge import _native
T = int(os.environ.get("T", "1"))
torch.set_num_threads(T); attnforge.set_default_threads(T)
for Lk in [int(x) for x in sys.argv[1:]]:
    q = torch.rand(1, 32, 1, 128); k = torch.rand(1, 8, Lk, 128); v = torch.rand(1, 8, Lk, 128)
    f = lambda: _native.torch_attention(q, k, v, None, False, None, None, True, False, False)
    for _ in range(100): f()
    tot, ker = [], []
    for _ in range(3000):
        t0 = time.perf_counter(); f(); t = time.perf_counter() - t0
        tot.append(t); ker.append(_native._last_torch_call()["kernel_seconds"])
    d = [a - b for a, b in zip(tot, ker)]
    print(f"Lk={Lk}: total {statistics.median(tot)*1e6:.2f} us, kernel {statistics.median(ker)*1e6:.2f} us, outside {statistics.median(d)*1e6:.2f} us (p10 {sorted(d)[300]*1e6:.2f})")
