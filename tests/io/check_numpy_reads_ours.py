#!/usr/bin/env python3
"""NumPy must read back, unchanged, what attnforge's writer wrote (tests/io/test_npy.cpp writes
written_*.npy from the same values make_npy_cases.py uses). Usage: check_numpy_reads_ours.py DIR"""
import os
import sys

import numpy as np

d = sys.argv[1]
values = ((np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 11.5) / 4).astype("<f4")
checks = {"written_tensor.npy": values, "written_scalar.npy": np.array(2.5, dtype="<f4"),
          "written_vector.npy": np.array([1.5, -2.0, 3.25], dtype="<f4"),
          "written_empty.npy": np.zeros((2, 0, 64), dtype="<f4"),
          "written_i1.npy": np.array([[-128, -127, -1], [0, 1, 127]], dtype="|i1")}
failed = 0
for name, expected in checks.items():
    got = np.load(os.path.join(d, name), allow_pickle=False)
    with open(os.path.join(d, name), "rb") as f:
        version = tuple(f.read(8)[6:8])
    ok = got.dtype == expected.dtype and got.shape == expected.shape and np.array_equal(got, expected) \
        and got.flags["C_CONTIGUOUS"] and version == (1, 0)
    print(f"{name}: {'ok' if ok else 'MISMATCH'} dtype={got.dtype} shape={got.shape} version={version}")
    failed += not ok
print(f"{len(checks) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
