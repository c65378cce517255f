#!/usr/bin/env python3
"""The decode peers: one decoding step over a KV cache (variants `decode` and `decode_gqa`,
docs/contract.md §1-§2) computed by PyTorch, ONNX Runtime and OpenVINO, each on its fastest path.

Semantics: q (B, Hq, Lq, E), k and v (B, Hkv, Lmax, E) caches, kv_length (B) int32; query head h uses
KV head h // (Hq/Hkv); scale 1/sqrt(E); keys j >= kv_length[b] take no part; query i sits at position
kv_length[b] - Lq + i and sees keys j <= that position (causal, bottom-right); a query row with no key
gives a zero row. Output (B, Hq, Lq, E) float32.

Each peer's prepare(variant, inputs, threads) builds everything (conversions, models, sessions, bindings)
once and returns a zero-argument callable that computes the output (a NumPy-convertible array). A callable
may carry a `before` attribute: a function that the timing loop runs before every timed call, outside the
timed region (OpenVINO's state rewind below). prepare raises Unsupported when the peer cannot express the
inputs (say which and why); the grid then leaves that peer out of the cell.

  .venv/bin/python bench/decode_peers.py --check   # every peer against decode_reference, small shapes,
                                                   # then a short 1-thread timing demo at B=1, Lk=4096
"""
import argparse
import os
import sys

# PyTorch's OpenMP threads spin between calls unless told otherwise (see attention_bench.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

from timing import time_batch  # noqa: E402

VARIANTS = {"decode": None, "decode_gqa": (32, 8, 128)}  # (Hq, Hkv, E) where fixed; decode: H run-time, E = 64


class Unsupported(Exception):
    """The peer has no way to compute these inputs (the message says why)."""


def decode_reference(q, k, v, kv_length):
    """float64 NumPy reference of the decode semantics (GQA head mapping h -> h // (Hq/Hkv)); returns float64."""
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    kv_length = np.asarray(kv_length).reshape(-1)
    B, Hq, Lq, E = q.shape
    Hkv, Lmax = k.shape[1], k.shape[2]
    if Hq % Hkv or k.shape != (B, Hkv, Lmax, E) or v.shape != k.shape or kv_length.shape != (B,):
        raise ValueError(f"shapes q {q.shape}, k {k.shape}, v {v.shape}, kv_length {kv_length.shape}")
    g = Hq // Hkv
    out = np.zeros((B, Hq, Lq, E))
    for b in range(B):
        n = int(kv_length[b])
        if not 0 <= n <= Lmax:
            raise ValueError(f"kv_length[{b}] = {n} outside [0, {Lmax}]")
        if n == 0:
            continue
        kk, vv = k[b, :, :n].astype(np.float64), v[b, :, :n].astype(np.float64)  # (Hkv, n, E)
        qq = q[b].astype(np.float64).reshape(Hkv, g * Lq, E)  # head kv*g + r, query i -> row r*Lq + i
        s = qq @ kk.transpose(0, 2, 1) / np.sqrt(E)  # (Hkv, g*Lq, n)
        pos = n - Lq + np.arange(Lq)
        allowed = np.tile(np.arange(n)[None, :] <= pos[:, None], (g, 1))  # (g*Lq, n)
        s = np.where(allowed, s, -np.inf)
        has_key = allowed.any(axis=1)[None, :, None]
        m = np.where(has_key, s.max(axis=-1, keepdims=True), 0.0)
        p = np.where(allowed, np.exp(s - m), 0.0)
        p /= np.where(has_key, p.sum(axis=-1, keepdims=True), 1.0)
        out[b] = (p @ vv).reshape(Hq, Lq, E)
    return out


def check(got, reference):
    """docs/contract.md §5's bound, as attention_bench.check: max|peer - ref| <= 1e-4 (1 + max|ref|)."""
    got = np.asarray(got, dtype=np.float64)
    if got.shape != reference.shape:
        return {"max_abs_error": float("inf"), "bound": 0.0, "ok": False, "note": f"shape {got.shape}"}
    err = float(np.max(np.abs(got - reference))) if got.size else 0.0
    if np.isnan(got).any():
        err = float("nan")
    bound = 1e-4 * (1 + float(np.max(np.abs(reference)))) if reference.size else 1e-4
    return {"max_abs_error": err, "bound": bound, "ok": bool(err <= bound)}


def _split(inputs):
    q, k, v = (np.ascontiguousarray(inputs[n], dtype=np.float32) for n in ("q", "k", "v"))
    kl = np.asarray(inputs["kv_length"]).astype(np.int64).reshape(-1)
    B, Hq, Lq, E = q.shape
    Hkv, Lmax = k.shape[1], k.shape[2]
    if kl.min(initial=0) < 0 or kl.max(initial=0) > Lmax:
        raise Unsupported(f"kv_length outside [0, {Lmax}]")
    return q, k, v, kl, (B, Hq, Hkv, Lq, Lmax, E)


def _visible(kl, Lq, Lk):
    """(B, Lq, Lk) bool: query i of batch b sees key j (j < kv_length[b] and j <= kv_length[b] - Lq + i)."""
    j = np.arange(Lk)[None, None, :]
    pos = kl[:, None, None] - Lq + np.arange(Lq)[None, :, None]
    return (j <= pos) & (j < kl[:, None, None])


def _additive(allowed):
    return np.where(allowed, 0.0, -np.inf).astype(np.float32)


class Torch:
    """`F.scaled_dot_product_attention` (the CPU flash kernel, `_scaled_dot_product_flash_attention_for_cpu`).

    - Every kv_length equal (L >= Lq): k, v sliced to L (a view; none at a full cache); Lq = 1 needs no mask;
      Lq > 1 takes a precomputed additive (0/-inf) bottom-right mask (Lq, L), broadcast. On CPU
      `causal_lower_right` has no fused lower-right kernel: it materialises the same boolean mask on every
      call (SDPA then converts it to additive), the same kernel with a little more work (equal within noise
      in the demo at B=1, Lk=4096).
    - Otherwise: one additive mask (B, 1, Lq, Lmax) with both the length and the causal condition; rows with no
      key come out zero (the flash kernel's convention).
    - decode_gqa: the g = Hq/Hkv query heads that share a KV head are folded into the query axis
      (q viewed as (B, Hkv, g*Lq, E), a free view; the mask tiled g times), so each KV head is read once
      per call. `enable_gqa=True` gives the same result but ~2x slower here (it walks the KV cache once per
      query head); `gqa="enable_gqa"` selects it (the --check demo times both).
    """

    def __init__(self, gqa="fold"):
        import torch
        self.torch, self.gqa = torch, gqa
        self.version = torch.__version__

    def name(self, variant):
        return "PyTorch SDPA" + (" (GQA folded into Lq)" if variant == "decode_gqa" and self.gqa == "fold" else
                                 " (enable_gqa)" if variant == "decode_gqa" else "")

    def prepare(self, variant, inputs, threads):
        torch, F = self.torch, self.torch.nn.functional
        torch.set_num_threads(threads)
        q, k, v, kl, (B, Hq, Hkv, Lq, Lmax, E) = _split(inputs)
        g = Hq // Hkv
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
        if (kl == kl[0]).all() and kl[0] >= Lq:
            L = int(kl[0])
            if L < Lmax:
                tk, tv = tk[:, :, :L], tv[:, :, :L]
            mask = None if Lq == 1 else torch.from_numpy(_additive(_visible(kl[:1], Lq, L)[0]))  # (Lq, L)
            tiled = None if mask is None else mask.repeat(g, 1)
        else:
            mask = torch.from_numpy(_additive(_visible(kl, Lq, Lmax))[:, None])  # (B, 1, Lq, Lmax)
            tiled = mask.repeat(1, 1, g, 1)
        inference = torch.inference_mode
        if g > 1 and self.gqa == "fold":
            qf = tq.view(B, Hkv, g * Lq, E)

            def call():
                with inference():
                    return F.scaled_dot_product_attention(qf, tk, tv, attn_mask=tiled).view(B, Hq, Lq, E)
            return call

        def call():
            with inference():
                return F.scaled_dot_product_attention(tq, tk, tv, attn_mask=mask, enable_gqa=g > 1)
        return call


class OnnxRuntime:
    """`com.microsoft.GroupQueryAttention` (CPU provider), decode path: the last Lq cache entries are the
    step's new key/value (input key, value as (B, Lq, Hkv*E)), the entries before them the past
    (past_key/past_value (B, Hkv, Lmax, E), seqlens_k = kv_length - 1, total_sequence_length = Lmax).
    past and present share one buffer (IOBinding binds present_key/present_value to the past's OrtValues,
    a private copy of the cache made once): ORT then only writes the Lq new entries (the values already there)
    instead of copying the whole cache every call (GQA's past_present_share_buffer; ~2-4x faster here).
    The fp32 kernel is unfused: per (b, head) a GEMM for the scores (materialised, Lq x Lk), softmax, GEMM.
    decode is GQA with Hq = Hkv.
    Limits (ORT 1.32): every kv_length >= Lq (the new tokens must fit after a non-negative past; so no
    kv_length 0 and no query row without keys); Lq > 1 with a past requires batch 1 ("batch_size must be 1
    when sequence_length > 1 and past context is given"): then the callable runs one bound session call per
    batch entry (that entry's slice of the shared buffer), in turn.
    """

    def __init__(self):
        import onnx  # noqa: F401  (the model is built with onnx.helper)
        import onnxruntime
        self.ort = onnxruntime
        self.version = onnxruntime.__version__

    def name(self, variant):
        return "ONNX Runtime GroupQueryAttention"

    @staticmethod
    def model(Hq, Hkv, E):
        from onnx import TensorProto as T, helper
        f = T.FLOAT
        node = helper.make_node(
            "GroupQueryAttention",
            ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"],
            ["output", "present_key", "present_value"], domain="com.microsoft", num_heads=Hq, kv_num_heads=Hkv)
        inputs = [helper.make_tensor_value_info("query", f, ["B", "S", Hq * E]),
                  helper.make_tensor_value_info("key", f, ["B", "S", Hkv * E]),
                  helper.make_tensor_value_info("value", f, ["B", "S", Hkv * E]),
                  helper.make_tensor_value_info("past_key", f, ["B", Hkv, "P", E]),
                  helper.make_tensor_value_info("past_value", f, ["B", Hkv, "P", E]),
                  helper.make_tensor_value_info("seqlens_k", T.INT32, ["B"]),
                  helper.make_tensor_value_info("total_sequence_length", T.INT32, [])]
        outputs = [helper.make_tensor_value_info(n, f, None) for n in ("output", "present_key", "present_value")]
        graph = helper.make_graph([node], "decode", inputs, outputs)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.microsoft", 1)])
        return m.SerializeToString()

    def session(self, Hq, Hkv, E, threads):
        ort = self.ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(self.model(Hq, Hkv, E), so, providers=["CPUExecutionProvider"])

    def prepare(self, variant, inputs, threads, share_buffer=True, session=None):
        """`session`: an earlier call's `.session` (same heads and threads), to bind several caches to one
        session (one thread pool; every session's idle workers spin after its calls, bench/peer_spin.py)."""
        ort = self.ort
        q, k, v, kl, (B, Hq, Hkv, Lq, Lmax, E) = _split(inputs)
        if kl.min() < Lq:
            raise Unsupported(f"GroupQueryAttention needs every kv_length >= Lq = {Lq} (got {kl.min()}): the "
                              "step's Lq new keys follow a past of kv_length - Lq entries")
        s = session if session is not None else self.session(Hq, Hkv, E, threads)
        k_cache, v_cache = k.copy(), v.copy()  # the shared past/present buffer: GQA writes the new entries into it
        query = np.ascontiguousarray(q.transpose(0, 2, 1, 3).reshape(B, Lq, Hq * E))
        idx = kl[:, None] - Lq + np.arange(Lq)[None, :]  # (B, Lq) cache positions of the step's tokens

        def new(c):
            return np.ascontiguousarray(np.stack([c[b][:, idx[b]] for b in range(B)]).transpose(0, 2, 1, 3)
                                        .reshape(B, Lq, Hkv * E))
        key, value = new(k), new(v)
        seqlens = (kl - 1).astype(np.int32)
        total = np.array(Lmax, dtype=np.int32)
        out = np.empty((B, Lq, Hq * E), dtype=np.float32)
        groups = [slice(0, B)] if Lq == 1 or B == 1 else [slice(b, b + 1) for b in range(B)]
        keep, bindings = [], []
        for sl in groups:
            io = s.io_binding()
            for name, a in (("query", query[sl]), ("key", key[sl]), ("value", value[sl]),
                            ("seqlens_k", seqlens[sl]), ("total_sequence_length", total)):
                io.bind_cpu_input(name, a)
            pk = ort.OrtValue.ortvalue_from_numpy(k_cache[sl])
            pv = ort.OrtValue.ortvalue_from_numpy(v_cache[sl])
            io.bind_ortvalue_input("past_key", pk)
            io.bind_ortvalue_input("past_value", pv)
            o = out[sl]
            io.bind_output("output", "cpu", element_type=np.float32, shape=o.shape, buffer_ptr=o.ctypes.data)
            if share_buffer:
                io.bind_ortvalue_output("present_key", pk)
                io.bind_ortvalue_output("present_value", pv)
            else:
                io.bind_output("present_key", "cpu")
                io.bind_output("present_value", "cpu")
            keep += [pk, pv]
            bindings.append(io)
        result = out.reshape(B, Lq, Hq, E).transpose(0, 2, 1, 3)  # a view: (B, Hq, Lq, E)
        run = s.run_with_iobinding

        def call():
            for io in bindings:
                run(io)
            return result
        call.keep = (s, keep, k_cache, v_cache, query, key, value, seqlens, total, out)  # owners of bound memory
        call.session = s  # for prepare(..., session=) of another cache of the same shape
        return call


class OpenVino:
    """OpenVINO's CPU ScaledDotProductAttention kernel with a KV cache (ScaledDotProductAttentionWithKVCache,
    reached through the stateful LLM pattern that the CPU plugin fuses: ReadValue(past) -> Gather(beam_idx)
    -> Concat(current) -> SDPA, Assign(concat); for GQA Unsqueeze -> Broadcast -> Reshape of the
    concatenation, absorbed in the fusion). KV_CACHE_PRECISION f32, INFERENCE_PRECISION_HINT f32,
    INFERENCE_NUM_THREADS, PERFORMANCE_HINT LATENCY, NUM_STREAMS 1. prepare checks the runtime model's
    layerType (ScaledDotProductAttention, not a decomposed MatMul/Softmax Subgraph) and raises otherwise.

    The state is the cache; each call appends the step's Lq tokens to it. Timed protocol, per call:
    `before` (untimed) sets the state to the first L - 2Lq cache entries and runs one step with entries
    [L - 2Lq, L - Lq) (so the plugin's cache buffer is allocated, grown and warm as in a running decode);
    the timed call then runs the step with the last Lq entries over a state of L - Lq: attention over L keys,
    plus the plugin's append of Lq entries to its cache (part of its decode step). Timing the call right after
    setting the state instead would include the plugin's reallocation of its cache (2-6x slower here).
    Every kv_length equal (L >= Lq): causal=True (the fused kernel aligns it bottom-right over past +
    current), none needed at Lq = 1. Otherwise an additive (0/-inf) mask input (B, 1, Lq, Lmax) over the whole
    cache (past = Lmax - Lq entries); rows with no key come out zero with a -inf mask.
    """

    def __init__(self):
        import openvino
        self.ov = openvino
        self.version = openvino.__version__.split("-")[0]
        self.core = openvino.Core()

    def name(self, variant):
        return "OpenVINO SDPA (stateful KV cache)"

    def model(self, Hq, Hkv, E, causal, mask):
        ov = self.ov
        import openvino.opset13 as ops
        import openvino.opset6 as ops6
        from openvino.op.util import Variable, VariableInfo
        f32 = ov.Type.f32
        q = ops.parameter([-1, Hq, -1, E], f32, name="q")
        cur = {"k": ops.parameter([-1, Hkv, -1, E], f32, name="k"), "v": ops.parameter([-1, Hkv, -1, E], f32, name="v")}
        beam = ops.parameter([-1], ov.Type.i32, name="beam_idx")
        params = [q, cur["k"], cur["v"], beam]
        batch = ops.gather(ops.shape_of(beam), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0)))
        empty = ops.broadcast(ops.constant(np.float32(0)),
                              ops.concat([batch, ops.constant(np.array([Hkv, 0, E], np.int64))], 0))
        present, sinks = {}, []
        for n in ("k", "v"):
            info = VariableInfo()
            info.data_shape, info.data_type, info.variable_id = ov.PartialShape([-1, Hkv, -1, E]), f32, "past_" + n
            var = Variable(info)
            past = ops6.read_value(empty, var)
            cat = ops.concat([ops.gather(past, beam, ops.constant(np.int64(0))), cur[n]], 2)
            sinks.append(ops6.assign(cat, var))
            present[n] = cat
        if Hq != Hkv:
            for n in ("k", "v"):
                u = ops.unsqueeze(present[n], ops.constant(np.int64(2)))
                b = ops.broadcast(u, ops.constant(np.array([1, 1, Hq // Hkv, 1, 1], np.int64)),
                                  broadcast_spec="BIDIRECTIONAL")
                present[n] = ops.reshape(b, ops.constant(np.array([0, Hq, -1, E], np.int64)), special_zero=True)
        args = [q, present["k"], present["v"]]
        if mask:
            m = ops.parameter([-1, 1, -1, -1], f32, name="mask")
            params.append(m)
            args.append(m)
        y = ops.scaled_dot_product_attention(*args, causal=causal)
        return ov.Model([y.output(0)], sinks, params, "decode")

    def compile(self, model, threads):
        cfg = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "INFERENCE_NUM_THREADS": str(threads),
               "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1"}
        return self.core.compile_model(model, "CPU", cfg)

    @staticmethod
    def layer_types(compiled):
        return [op.get_rt_info()["layerType"].astype(str) for op in compiled.get_runtime_model().get_ordered_ops()]

    def prepare(self, variant, inputs, threads):
        ov = self.ov
        q, k, v, kl, (B, Hq, Hkv, Lq, Lmax, E) = _split(inputs)
        uniform = bool((kl == kl[0]).all() and kl[0] >= Lq)
        L = int(kl[0]) if uniform else Lmax
        compiled = self.compile(self.model(Hq, Hkv, E, causal=uniform and Lq > 1, mask=not uniform), threads)
        layers = self.layer_types(compiled)
        if "ScaledDotProductAttention" not in layers:
            raise Unsupported(f"the CPU plugin did not fuse the stateful SDPA (layers: {', '.join(layers)})")
        req = compiled.create_infer_request()
        P, P0 = L - Lq, max(L - 2 * Lq, 0)
        states = {s.name: s for s in req.query_state()}
        past = {n: ov.Tensor(np.ascontiguousarray(c[:, :, :P0])) for n, c in (("past_k", k), ("past_v", v))}
        beam = np.arange(B, dtype=np.int32)
        step = {"q": q, "k": np.ascontiguousarray(k[:, :, P:L]), "v": np.ascontiguousarray(v[:, :, P:L]),
                "beam_idx": beam}
        warm = {"q": np.ascontiguousarray(q[:, :, :P - P0]), "k": np.ascontiguousarray(k[:, :, P0:P]),
                "v": np.ascontiguousarray(v[:, :, P0:P]), "beam_idx": beam}
        if not uniform:
            step["mask"] = _additive(_visible(kl, Lq, Lmax))[:, None]
            warm["mask"] = np.zeros((B, 1, P - P0, P), np.float32)

        def before():
            for n, s in states.items():
                if P0:
                    s.state = past[n]
                else:
                    s.reset()
            if P > P0:
                req.infer(warm, share_inputs=True)

        def call():
            return req.infer(step, share_inputs=True)[0]
        call.before = before
        call.keep = (compiled, past, step, warm)
        return call


def peers(quiet=False):
    """Every decode peer whose package imports; a message on stderr for each that does not."""
    found = []
    for cls in (Torch, OnnxRuntime, OpenVino):
        try:
            found.append(cls())
        except ImportError as e:
            if not quiet:
                print(f"[decode] {cls.__name__} left out: {e}", file=sys.stderr)
    return found


def make_inputs(variant, B, Lq, Lmax, kv_length, rng, heads=8):
    Hq, Hkv, E = VARIANTS[variant] or (heads, heads, 64)
    return {"q": rng.standard_normal((B, Hq, Lq, E), dtype=np.float32),
            "k": rng.standard_normal((B, Hkv, Lmax, E), dtype=np.float32),
            "v": rng.standard_normal((B, Hkv, Lmax, E), dtype=np.float32),
            "kv_length": np.asarray(kv_length, dtype=np.int32)}


def run_once(call, repeat=1):
    """The output of call() (after call.before(), if any); repeat > 1: of the last of that many calls."""
    for _ in range(repeat):
        if getattr(call, "before", None):
            call.before()
        out = to_numpy(call()).copy()  # a copy: a peer may reuse its output buffer
    return out


def to_numpy(x):
    """A peer's output as a NumPy array (PyTorch tensors through .numpy(), no copy)."""
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def self_check(found):
    """Every peer against decode_reference on small shapes; returns False if any supported case fails."""
    rng = np.random.default_rng(0)
    B, Lmax = 2, 300
    cases = {"full": [Lmax, Lmax], "equal<Lmax": [150, 150], "mixed": [0, Lmax], "mixed<Lq": [2, 177],
             "mixed>=Lq": [5, 263]}
    ok = True
    print(f"check: B={B} Lmax={Lmax}, bound 1e-4(1 + max|ref|)")
    for variant in VARIANTS:
        for Lq in (1, 4):
            for case, kl in cases.items():
                inputs = make_inputs(variant, B, Lq, Lmax, kl, rng)
                ref = decode_reference(**inputs)
                for p in found:
                    try:
                        c = check(run_once(p.prepare(variant, inputs, 1), repeat=2), ref)  # the protocol repeats
                        status = f"{'ok' if c['ok'] else 'FAILED'} err {c['max_abs_error']:.1e}"
                        ok &= c["ok"]
                    except Unsupported as e:
                        status = f"unsupported: {e}"
                    print(f"  {variant:10} Lq={Lq} kv_length={kl!s:11} ({case:10}) {p.name(variant):40} {status}")
    return ok


def demo(found, B=1, Lk=4096, threads=1):
    """1-thread timings at one mid-size cell, the chosen path of each peer beside the alternatives it beat."""
    rng = np.random.default_rng(1)
    print(f"demo: B={B} Lk={Lk} (full cache), {threads} thread(s); median of >= 3 calls and 0.5 s")
    for variant in VARIANTS:
        for Lq in (1, 4):
            inputs = make_inputs(variant, B, Lq, Lk, [Lk] * B, rng)
            ref = decode_reference(**inputs)
            gb = 2 * inputs["k"].nbytes / 1e9
            paths = []
            for p in found:
                paths.append((p.name(variant), lambda p=p: p.prepare(variant, inputs, threads)))
                if isinstance(p, Torch) and variant == "decode_gqa":
                    alt = Torch(gqa="enable_gqa")
                    paths.append((alt.name(variant) + " [alternative]", lambda: alt.prepare(variant, inputs, threads)))
                if isinstance(p, Torch) and Lq > 1:
                    label = "PyTorch SDPA causal_lower_right" + (" (enable_gqa)" if variant == "decode_gqa" else "")
                    paths.append((label + " [alternative]", lambda: _torch_clr(inputs, threads)))
                if isinstance(p, OnnxRuntime):
                    paths.append((p.name(variant) + " unshared present [alternative]",
                                  lambda p=p: p.prepare(variant, inputs, threads, share_buffer=False)))
                if isinstance(p, OpenVino) and Lq == 1:
                    paths.append(("OpenVINO plain opset13 SDPA model [alternative]",
                                  lambda p=p: _openvino_plain(p, inputs, threads)))
            for name, make in paths:
                try:
                    call = make()
                except Unsupported as e:
                    print(f"  {variant:10} Lq={Lq} {name:58} unsupported: {e}")
                    continue
                c = check(run_once(call), ref)
                s = time_batch(call, before=getattr(call, "before", None))
                print(f"  {variant:10} Lq={Lq} {name:58} {s * 1e3:8.3f} ms {gb / s:7.1f} GB/s  "
                      f"check {'ok' if c['ok'] else 'FAILED'} ({c['max_abs_error']:.1e})")
                del call


def _torch_clr(inputs, threads):
    """PyTorch with torch.nn.attention.bias.causal_lower_right (an alternative, for the demo)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention.bias import causal_lower_right
    import warnings
    torch.set_num_threads(threads)
    q, k, v = (torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in ("q", "k", "v"))
    bias = causal_lower_right(q.shape[2], k.shape[2])
    gqa = q.shape[1] != k.shape[1]

    def call():
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, enable_gqa=gqa)
    return call


def _openvino_plain(p, inputs, threads):
    """A plain (stateless) OpenVINO model, opset13 SDPA on the whole cache, Lq = 1 (an alternative, for the demo)."""
    import openvino.opset13 as ops
    q, k, v = (np.ascontiguousarray(inputs[n]) for n in ("q", "k", "v"))
    Hq, Hkv, E = q.shape[1], k.shape[1], q.shape[3]
    f32 = p.ov.Type.f32
    pq, pk, pv = (ops.parameter([-1, h, -1, E], f32, name=n) for n, h in (("q", Hq), ("k", Hkv), ("v", Hkv)))
    kk, vv = pk, pv
    if Hq != Hkv:
        def expand(x):
            u = ops.unsqueeze(x, ops.constant(np.int64(2)))
            b = ops.broadcast(u, ops.constant(np.array([1, 1, Hq // Hkv, 1, 1], np.int64)),
                              broadcast_spec="BIDIRECTIONAL")
            return ops.reshape(b, ops.constant(np.array([0, Hq, -1, E], np.int64)), special_zero=True)
        kk, vv = expand(pk), expand(pv)
    m = p.ov.Model([ops.scaled_dot_product_attention(pq, kk, vv, causal=False).output(0)], [pq, pk, pv], "plain")
    req = p.compile(m, threads).create_infer_request()
    feed = {"q": q, "k": k, "v": v}
    return lambda: req.infer(feed, share_inputs=True)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="peers against the reference (small shapes), then the demo")
    ap.add_argument("--no-demo", action="store_true", help="with --check: leave out the timing demo")
    ap.add_argument("--demo-lk", type=int, default=4096)
    a = ap.parse_args()
    if not a.check:
        ap.print_help()
        return 2
    found = peers()
    for p in found:
        print(f"{type(p).__name__} {p.version}")
    ok = self_check(found)
    if not a.no_demo:
        demo(found, Lk=a.demo_lk)
    print("check: all supported cases ok" if ok else "check: FAILURES above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
