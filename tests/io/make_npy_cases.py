#!/usr/bin/env python3
"""Writes the .npy files tests/io/test_npy.cpp reads: valid files in every supported version and dtype,
written by NumPy itself, and malformed ones. Usage: make_npy_cases.py OUT_DIR"""
import os
import sys

import numpy as np
from numpy.lib import format as npf

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
p = lambda name: os.path.join(out, name)
values = (np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 11.5) / 4  # exact in float32


def write(name, array, version):
    with open(p(name), "wb") as f:
        npf.write_array(f, array, version=version)


# Valid files, read by the reader and compared with `values`.
for version in [(1, 0), (2, 0), (3, 0)]:
    write(f"f4_v{version[0]}.npy", values.astype("<f4"), version)
write("f8.npy", values.astype("<f8"), (1, 0))
write("b1.npy", np.array([[True, False, True], [False, False, True]]), (1, 0))
write("u1.npy", np.array([[1, 0, 1], [0, 0, 1]], dtype=np.uint8), (1, 0))
write("scalar.npy", np.array(2.5, dtype="<f4"), (1, 0))
write("empty.npy", np.zeros((2, 0, 64), dtype="<f4"), (1, 0))
write("i4.npy", np.array([0, 7, -3, 2147483647], dtype="<i4"), (1, 0))  # index inputs
write("f2.npy", np.array([1.0, -0.0999755859375, 65504.0, np.inf, 5.960464477539063e-08], dtype="<f2"), (1, 0))  # fp16 kernels

# Malformed or unsupported files.
np.save(p("fortran.npy"), np.asfortranarray(values.astype("<f4")))
np.save(p("big_endian.npy"), values.astype(">f4"))
np.save(p("int64.npy"), np.arange(6, dtype="<i8"))
good = open(p("f4_v1.npy"), "rb").read()
open(p("truncated_data.npy"), "wb").write(good[:-4])
open(p("trailing_data.npy"), "wb").write(good + b"\0\0\0\0")
open(p("truncated_header.npy"), "wb").write(good[:20])
open(p("bad_magic.npy"), "wb").write(b"NOTNPY" + good[6:])
open(p("bad_version.npy"), "wb").write(good[:6] + b"\x07\x00" + good[8:])
open(p("empty_file.npy"), "wb").write(b"")


def raw_header(name, header):
    h = header.encode("latin1")
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    open(p(name), "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + b"\0" * 16)


raw_header("huge_shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4000000000, 4000000000, 4000000000), }")
raw_header("negative_shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-4, 1), }")
raw_header("missing_key.npy", "{'descr': '<f4', 'shape': (4,), }")
raw_header("garbage_header.npy", "{'descr': <f4 fortran_order False}")
raw_header("bad_bool.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (16,), }")
with open(p("bad_bool.npy"), "r+b") as f:
    f.seek(-1, 2)
    f.write(b"\x07")
