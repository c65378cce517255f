"""attnforge through its Python module (python/), timed in the benchmark's own process with the peers' timing
function (bench/timing.py), so that ours and the peers are measured the same way; `attnforge bench` (C++)
stays the row the FMA peak and the % of peak come from.

The module is the one of the build whose `attnforge` program the benchmark runs (<build>/python)."""
import functools
import os
import sys

NAME = "attnforge (Python)"


class OursPython:
    def __init__(self, exe):
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(exe))))
        folder = os.path.join(build, "python")
        if not os.path.isdir(os.path.join(folder, "attnforge")):
            raise ImportError(f"no Python module beside {exe} ({folder}/attnforge): a build with ATTNFORGE_PYTHON=ON")
        sys.path.insert(0, folder)
        import attnforge
        self.module = attnforge

    def prepare(self, variant, inputs, threads, dtype=None):
        """A zero-argument call of attnforge.run on these inputs: look-up, checks and a fresh result every call, as a
        peer's call does. float32: the NumPy arrays, read in place. bf16/fp16: the inputs as torch tensors of that
        type made once (read in place, as the bf16 peers' tensors are) and the result back as a float32 NumPy array
        (as the PyTorch bf16 peer returns it)."""
        if dtype is None:
            return functools.partial(self.module.run, variant, threads=threads, **inputs)
        import torch
        storage = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        tensors = {k: torch.from_numpy(v).to(storage) if v.dtype == "float32" else torch.from_numpy(v)
                   for k, v in inputs.items()}
        run = self.module.run
        return lambda: run(variant, threads=threads, dtype=dtype, **tensors).float().numpy()
