#!/usr/bin/env python3
"""Writes the fuzz seed corpus (corpus/) and the hand-made adversarial cases (regressions/).

corpus/       valid .npy files NumPy wrote: every dtype, format version and rank the reader accepts,
              so that the fuzzer starts from the whole accepted grammar.
regressions/  inputs that must be rejected with a clear message and must never crash or allocate
              what the file's size does not justify; files libFuzzer finds (crash-*, leak-*, ...) go
              here too, after the fix. Replayed by the io.npy_untrusted test in every build.

Usage: make_corpus.py   (writes next to itself; the files are committed)
"""
import io
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def raw(header, data=b"", version=1):
    """A .npy file with a hand-written header dict."""
    h = header.encode("latin1")
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h)) + h + data


def write(folder, files):
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(HERE, folder, name), "wb") as f:
            f.write(content)


rng = np.random.default_rng(0)
write("corpus", {
    "f4_2x3x4.npy": npy(rng.standard_normal((2, 3, 4)).astype(np.float32)),
    "f4_v2.npy": npy(np.arange(6, dtype=np.float32).reshape(2, 3), (2, 0)),
    "f4_v3.npy": npy(np.arange(4, dtype=np.float32), (3, 0)),
    "f8_3x2.npy": npy(rng.standard_normal((3, 2))),
    "b1_mask.npy": npy(np.array([[True, False, True], [False, False, True]])),
    "u1_mask.npy": npy(np.array([1, 0, 1, 1], np.uint8)),
    "scalar.npy": npy(np.float32(2.5)),
    "empty_0x64.npy": npy(np.zeros((0, 64), np.float32)),
    "rank5.npy": npy(np.ones((1, 1, 2, 1, 3), np.float32)),
    "special_values.npy": npy(np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4e38], np.float32)),
})

pad = lambda s: s + " " * ((64 - (10 + len(s) + 1) % 64) % 64) + "\n"
write("regressions", {
    # Declares 2^40 float32 values in a file of a few bytes: rejected from the sizes alone.
    "huge_declared_shape.npy": raw(pad("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }"), b"\0" * 16),
    # Sizes whose product overflows 64 bits.
    "overflowing_shape.npy": raw(pad("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }")),
    # One size beyond int64.
    "size_beyond_int64.npy": raw(pad("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }")),
    "negative_size.npy": raw(pad("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }")),
    # A huge size times a zero size: zero elements, but the huge size must not be looped over later.
    "huge_times_zero.npy": raw(pad("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 0), }")),
    # Version 2 header length of 4 GiB in a tiny file.
    "v2_header_length_4GiB.npy": b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'",
    "header_unterminated.npy": raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2,"),
    "header_no_closing_brace.npy": raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "),
    "header_unknown_key.npy": raw(pad("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"), b"\0" * 4),
    "header_missing_shape.npy": raw(pad("{'descr': '<f4', 'fortran_order': False}")),
    "header_empty.npy": raw(""),
    "descr_structured.npy": raw(pad("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"), b"\0" * 4),
    "bool_value_2.npy": raw(pad("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"), b"\x01\x02\x00"),
    "truncated_data.npy": npy(np.ones((4, 4), np.float32))[:-5],
    "only_magic.npy": b"\x93NUMPY",
    "version_9.npy": b"\x93NUMPY\x09\x00\x10\x00{}" + b" " * 14,
    "empty_file.npy": b"",
})
