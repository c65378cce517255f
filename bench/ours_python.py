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
        """A zero-argument call of attnforge.run on these inputs (NumPy arrays, read in place): look-up, checks and a
        fresh result every call, as a peer's call does."""
        return functools.partial(self.module.run, variant, threads=threads, dtype=dtype, **inputs)
