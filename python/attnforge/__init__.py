"""attnforge: fast transformer attention on CPUs, from Python.

Kernels generated ahead of time from attention variants written in attnforge's C++ DSL, called on NumPy
arrays and PyTorch tensors without copying them; the float64 reference interpreter beside them.

    >>> import attnforge, numpy as np
    >>> q = k = v = np.random.rand(1, 8, 128, 64).astype(np.float32)
    >>> y = attnforge.run("sdpa", q=q, k=k, v=v)           # (1, 8, 128, 64) float32
    >>> fast = attnforge.kernel("sdpa", B=1, H=8, Hkv=8, E=64, Lq=128, Lkv=128)
    >>> fast(q=q, k=k, v=v, out=y)                           # no allocation

variants(), signature(name) and kernels(name) say what there is; docs/python.md has the rest.
"""

from ._native import Kernel, kernel, kernels, run, set_default_threads, signature, variants

__all__ = ["Kernel", "kernel", "kernels", "run", "set_default_threads", "signature", "variants"]
