"""attnforge: fast transformer attention on CPUs, from Python.

Kernels generated ahead of time from attention variants written in attnforge's C++ DSL, called on NumPy
arrays and PyTorch tensors without copying them; the float64 reference interpreter beside them.

    >>> import attnforge, numpy as np
    >>> q = k = v = np.random.rand(1, 8, 128, 64).astype(np.float32)
    >>> y = attnforge.run("sdpa", q=q, k=k, v=v)           # (1, 8, 128, 64) float32
    >>> fast = attnforge.kernel("sdpa", B=1, H=8, Hkv=8, E=64, Lq=128, Lkv=128)
    >>> fast(q=q, k=k, v=v, out=y)                           # no allocation

variants(), signature(name) and kernels(name) say what there is; quantize_into_cache writes new tokens into the
uint8 cache decode_u8 reads; docs/python.md has the rest.
attnforge.torch (torch's scaled_dot_product_attention as a custom operator) and attnforge.transformers
(attn_implementation="attnforge") are imported on first use: torch and transformers are optional.
"""

import importlib

from ._native import (
    Kernel,
    kernel,
    kernels,
    quantize_into_cache,
    run,
    set_default_threads,
    signature,
    variants,
)

__all__ = [
    "Kernel",
    "kernel",
    "kernels",
    "quantize_into_cache",
    "run",
    "set_default_threads",
    "signature",
    "variants",
]


def __getattr__(name):
    # `attnforge.torch.…` after a plain `import attnforge`, without importing torch for those who do not use it.
    if name in ("torch", "transformers"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'attnforge' has no attribute {name!r}")
