#!/usr/bin/env python3
"""The matrix-product bound of the mha cells: how fast the best sgemm on this machine does one
projection (rows x D times D x D, D = 512), next to the FMA peak `attnforge bench` measures.

A full mha call spends 8·B·L·D² of its 8·B·L·D² + 4·B·L²·D flops in its four projections (89% at
L = 128); ONNX Runtime runs them as MLAS MatMuls. This times that MatMul alone (an ONNX session holding
only it, the weight an initializer as in the benchmark's mha graph) and NumPy's matmul (OpenBLAS), so a
reader can see what fraction of the peak a projection reaches at best here.

    .venv/bin/python bench/matmul_bound.py [--rows 512 2048] [--width 512] [--threads 1 2]
"""
import argparse
import statistics
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def median_seconds(call, rounds=7, min_seconds=0.2):
    for _ in range(10):
        call()
    times = []
    for _ in range(rounds):
        n, start = 0, time.perf_counter()
        while True:
            call()
            n += 1
            if time.perf_counter() - start > min_seconds:
                break
        times.append((time.perf_counter() - start) / n)
    return statistics.median(times)


def matmul_session(rows, width, threads, weight):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "projection",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, width])],
        initializer=[numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[512, 2048], help="B·L: rows of x")
    ap.add_argument("--width", type=int, default=512, help="D")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"ONNX Runtime {ort.__version__}, NumPy {np.__version__}; x (rows x {a.width}) times w ({a.width} x {a.width})")
    for rows in a.rows:
        x = rng.standard_normal((rows, a.width), dtype=np.float32)
        w = rng.standard_normal((a.width, a.width), dtype=np.float32)
        flops = 2.0 * rows * a.width * a.width
        for threads in a.threads:
            session = matmul_session(rows, a.width, threads, w)
            s = median_seconds(lambda: session.run(None, {"x": x}))
            print(f"  rows {rows:5d}  {threads} thread(s)  ONNX Runtime MatMul  {s * 1e3:7.3f} ms  {flops / s / 1e9:6.1f} GFLOP/s")
        s = median_seconds(lambda: x @ w)
        print(f"  rows {rows:5d}  numpy's threads    NumPy matmul         {s * 1e3:7.3f} ms  {flops / s / 1e9:6.1f} GFLOP/s")
    print("FMA peak on this machine: build/tools/attnforge/attnforge bench sdpa --length 128 --threads 1,2 (first rows)")


if __name__ == "__main__":
    main()
