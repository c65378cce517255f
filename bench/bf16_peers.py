"""The peers of the bf16 grid (bench/attention_bench.py --bf16): sdpa, mha and self_attention_layer with 16-bit
storage.

Each peer's prepare(variant, inputs, threads) returns a callable computing the output from inputs already
converted (conversion not timed), or raises Unsupported with the reason. Inputs arrive as float32 NumPy arrays
whose values are bf16 already (rounded once by the grid), so every implementation multiplies the same numbers:
- OpenVINO's CPU SDPA compiled with INFERENCE_PRECISION_HINT f32 and bf16 (the plugin then runs its bf16
  kernels: AMX or AVX512_BF16), for sdpa (q, k, v parameters) and mha (x a parameter, the weights constants,
  MatMul / Reshape / Transpose around the SDPA node, as bench/flex_peers.py builds it); self_attention_layer adds
  MVN · gamma + beta before it and the residual add after;
- PyTorch SDPA and nn.MultiheadAttention in torch.bfloat16 (after nn.LayerNorm, plus the residual, for
  self_attention_layer);
- ONNX Runtime's opset-23 Attention (and MatMul for mha) in float16, the peer of our fp16 kernels: its CPU
  provider has no bf16 kernels (MatMul, Expand: NOT_IMPLEMENTED in 1.32), but float16 ones.
bf16 and fp16 values: the grid's inputs are bf16 values, which float16 holds exactly at these magnitudes.
Every output, ours included, is checked against reference() (float64 NumPy on the rounded inputs) with
docs/contract.md §5's bf16 bound, 5e-3 · (1 + max|reference|), plus, for mha and the layer, whose projected Q, K, V
every implementation rounds to bf16, §5's term for rounded operands (rounded_operands_term).

Run as a program (`bf16_peers.py [--attnforge EXE]`) it checks every implementation on large-logit inputs
(logits ~10³–10⁴, where §5 still holds) against that bound, and prints each one's error beside OpenVINO bf16's.
"""
import numpy as np

import decode_peers
import peers as prefill_peers

E, H, D = 64, 8, 512


class Unsupported(Exception):
    pass


def round_to_bf16(a):
    """float32 → bf16 values (as float32), to nearest even, NaN kept: what `attnforge run --dtype bf16` does."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = (rounded & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out)


def layer_norm(x, gamma, beta, eps=1e-5):
    """docs/contract.md §1: (x − mean) / sqrt(var + eps) · gamma + beta over the last axis, biased variance."""
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps) * gamma + beta


def projected(variant, inputs):
    """float64 (q, k, v) heads (B, H, L, E) as they enter the products: mha's projections of x (of LayerNorm(x) in
    the layer); sdpa's inputs."""
    f = {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()}
    if variant == "sdpa":
        return f["q"], f["k"], f["v"]
    x = f["x"]
    if variant == "self_attention_layer":
        x = layer_norm(x, f["gamma"], f["beta"])
    B, L, _ = x.shape
    split = lambda t: t.reshape(B, L, H, D // H).transpose(0, 2, 1, 3)
    return split(x @ f["wq"]), split(x @ f["wk"]), split(x @ f["wv"])


def rounded_operands_terms(variant, inputs):
    """docs/contract.md §5's term for a 16-bit implementation that rounds the values it computes,
    V·(e^(4·u·S) − 1) + 2·u·V, S = max scale·Σₑ|qₑ·kₑ| and V = max |v| of the projected heads, by type (u = 2⁻⁸ for
    bf16, 2⁻¹¹ for fp16); 0 for sdpa (nothing computed is rounded). +inf where e^(4·u·S) overflows (S ~ 10⁵): the
    contract then bounds nothing. S head by head, so that B·H·L² floats are never held at once."""
    if variant == "sdpa":
        return {"bf16": 0.0, "fp16": 0.0}
    q, k, v = projected(variant, inputs)
    S = max(float((np.abs(q[b, h]) @ np.abs(k[b, h]).T).max())
            for b in range(q.shape[0]) for h in range(q.shape[1])) / np.sqrt(q.shape[-1])
    V = float(np.abs(v).max())
    with np.errstate(over="ignore"):
        return {t: float(V * np.expm1(4 * u * S) + 2 * u * V) for t, u in (("bf16", 2.0 ** -8), ("fp16", 2.0 ** -11))}


def reference(variant, inputs):
    """float64 NumPy: sdpa on q, k, v; mha (8 heads, no bias, x · W) on x and the weights; self_attention_layer
    x + mha(LayerNorm(x))."""
    f = {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()}

    def attend(q, k, v):
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        s -= s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        return (p / p.sum(axis=-1, keepdims=True)) @ v

    o = attend(*projected(variant, inputs))
    if variant == "sdpa":
        return o
    B, _, L, _ = o.shape
    y = o.transpose(0, 2, 1, 3).reshape(B, L, D) @ f["wo"]
    return f["x"] + y if variant == "self_attention_layer" else y


def check(got, ref, relative=5e-3, term=0.0):
    """relative: §5's factor, 5e-3 for bf16, 2e-3 for fp16; term: added to it (rounded_operands_term)."""
    got = np.asarray(got, dtype=np.float64)
    err = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
    bound = relative * (1 + float(np.max(np.abs(ref)))) + term
    return {"max_abs_error": err, "bound": float(bound), "ok": bool(err <= bound)}


class OpenVino:
    def __init__(self, precision):
        self.base = decode_peers.OpenVino()
        self.ov, self.version, self.precision = self.base.ov, self.base.version, precision

    def name(self, variant):
        return f"OpenVINO SDPA {self.precision}"

    def model(self, variant, inputs):
        import openvino.opset13 as ops
        ov = self.ov
        f32 = ov.Type.f32
        if variant == "sdpa":
            B, Hh, L, Ee = inputs["q"].shape
            params = [ops.parameter([B, Hh, L, Ee], f32, name=n) for n in ("q", "k", "v")]
            y = ops.scaled_dot_product_attention(*params, causal=False)
            return ov.Model([y.output(0)], params, variant)
        B, L, _ = inputs["x"].shape
        x = ops.parameter([B, L, D], f32, name="x")
        n = x
        if variant == "self_attention_layer":
            n = ops.mvn(x, ops.constant(np.array([2], np.int64)), True, 1e-5, "inside_sqrt")
            n = ops.add(ops.multiply(n, ops.constant(np.ascontiguousarray(inputs["gamma"]))),
                        ops.constant(np.ascontiguousarray(inputs["beta"])))
        heads = []
        for w in ("wq", "wk", "wv"):
            t = ops.matmul(n, ops.constant(np.ascontiguousarray(inputs[w])), False, False)
            t = ops.reshape(t, ops.constant(np.array([B, L, H, D // H], np.int64)), False)
            heads.append(ops.transpose(t, ops.constant(np.array([0, 2, 1, 3], np.int64))))
        o = ops.scaled_dot_product_attention(*heads, causal=False)
        o = ops.reshape(ops.transpose(o, ops.constant(np.array([0, 2, 1, 3], np.int64))),
                        ops.constant(np.array([B, L, D], np.int64)), False)
        y = ops.matmul(o, ops.constant(np.ascontiguousarray(inputs["wo"])), False, False)
        if variant == "self_attention_layer":
            y = ops.add(x, y)
        return ov.Model([y.output(0)], [x], variant)

    def prepare(self, variant, inputs, threads):
        cfg = {"INFERENCE_PRECISION_HINT": self.precision, "INFERENCE_NUM_THREADS": str(threads),
               "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1"}
        compiled = self.base.core.compile_model(self.model(variant, inputs), "CPU", cfg)
        req = compiled.create_infer_request()
        names = ("q", "k", "v") if variant == "sdpa" else ("x",)
        feed = {n: np.ascontiguousarray(inputs[n]) for n in names}

        def call():
            return req.infer(feed, share_inputs=True)[0]
        call.keep = (compiled, feed)
        return call


class TorchBf16:
    def __init__(self):
        import torch
        self.torch, self.version = torch, torch.__version__
        self.base = prefill_peers.Torch()

    def name(self, variant):
        return {"sdpa": "PyTorch SDPA bf16", "mha": "PyTorch MultiheadAttention bf16"}.get(
            variant, "PyTorch LayerNorm+MultiheadAttention bf16")

    def prepare(self, variant, inputs, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        t = {k: torch.from_numpy(v).to(torch.bfloat16) for k, v in inputs.items()}
        if variant == "sdpa":
            F = torch.nn.functional
            return lambda: F.scaled_dot_product_attention(t["q"], t["k"], t["v"]).float()
        mha = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True).eval()
        with torch.no_grad():  # torch computes x · Wᵀ: its weights are ours transposed
            mha.in_proj_weight.copy_(torch.cat([t["wq"].T, t["wk"].T, t["wv"].T]).float())
            mha.out_proj.weight.copy_(t["wo"].T.float())
        mha = mha.to(torch.bfloat16)
        x = t["x"]
        if variant == "self_attention_layer":
            norm = torch.nn.LayerNorm(D, eps=1e-5).eval()
            with torch.no_grad():
                norm.weight.copy_(t["gamma"].float())
                norm.bias.copy_(t["beta"].float())
            norm = norm.to(torch.bfloat16)

            def layer():
                n = norm(x)
                return (x + mha(n, n, n, need_weights=False)[0]).float()
            return layer
        return lambda: mha(x, x, x, need_weights=False)[0].float()

    def run(self, f):
        with self.torch.inference_mode():
            return f().numpy()


class OnnxRuntimeFp16:
    """bench/peers.py's ONNX Runtime model with float16 tensors (the weights of mha float16 inputs too)."""

    def __init__(self):
        self.base = prefill_peers.OnnxRuntime()
        self.version = self.base.version

    def name(self, variant):
        return "ONNX Runtime Attention fp16"

    def prepare(self, variant, inputs, threads):
        from onnx import TensorProto
        if variant not in ("sdpa", "mha"):
            raise Unsupported(f"{variant}: this grid builds ONNX Runtime models of sdpa and mha only")
        model = self.base.model(variant, inputs)
        for v in list(model.graph.input) + list(model.graph.output):
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
        so = self.base.ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
        s = self.base.ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        feed = {k: v.astype(np.float16) for k, v in inputs.items()}
        return lambda: s.run(None, feed)[0]


def dtype_of(implementation):
    """The storage type an implementation of the grid computes in, from its name."""
    return "fp16" if "fp16" in implementation else "float32" if implementation.endswith((" f32", "float32")) else "bf16"


def peers():
    """Every bf16/fp16 peer whose package imports; a message on stderr for each that does not."""
    import sys
    found = []
    for make in (lambda: OpenVino("f32"), lambda: OpenVino("bf16"), TorchBf16, OnnxRuntimeFp16):
        try:
            found.append(make())
        except ImportError as e:
            print(f"[bf16] a peer is left out: {e}", file=sys.stderr)
    return found


def run_once(peer, f):
    return peer.run(f) if hasattr(peer, "run") else f()


def large_logit_inputs(variant, rng, B=1, L=64):
    """Inputs whose logits reach ~10³ (docs/contract.md §5 holds for logits up to 1e4), rounded to bf16: sdpa's
    q, k, v uniform ±75; mha's x uniform ±75 with the usual weights (N(0, 1/D)); the layer's weights 45 times
    larger instead (its LayerNorm undoes x's scale), gamma 1 and beta 0."""
    if variant == "sdpa":
        return {n: round_to_bf16(rng.uniform(-75, 75, (B, H, L, E)).astype(np.float32)) for n in ("q", "k", "v")}
    layer = variant == "self_attention_layer"
    scale = 45 if layer else 1
    w = lambda: round_to_bf16((rng.standard_normal((D, D)) * scale / np.sqrt(D)).astype(np.float32))
    inputs = {"x": round_to_bf16(rng.uniform(-75, 75, (B, L, D)).astype(np.float32)), "wq": w(), "wk": w(),
              "wv": w(), "wo": w()}
    if layer:
        inputs.update(gamma=np.ones(D, np.float32), beta=np.zeros(D, np.float32))
    return inputs


def main():
    """Every bf16 implementation on large-logit inputs against the contract's bf16 bound (`--attnforge EXE` adds
    ours through `attnforge run --dtype bf16`)."""
    import argparse
    import os
    import subprocess
    import sys
    import tempfile
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--attnforge", help="the attnforge executable")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    for variant in ("sdpa", "mha", "self_attention_layer"):
        inputs = large_logit_inputs(variant, rng)
        ref = reference(variant, inputs)
        q, k, _ = projected(variant, inputs)
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        term = rounded_operands_terms(variant, inputs)
        print(f"{variant}: largest |logit| {np.abs(s).max():.0f}, §5's term for rounded operands {term['bf16']:.3g}"
              + (" (e^(4·u·S) overflows: the contract bounds nothing here; the errors side by side are the check)"
                 if np.isinf(term["bf16"]) else ""))
        results = {}
        if a.attnforge:
            with tempfile.TemporaryDirectory() as tmp:
                args = [a.attnforge, "run", variant, "--dtype", "bf16", "--output", os.path.join(tmp, "o.npy")]
                for n, v in inputs.items():
                    np.save(os.path.join(tmp, n + ".npy"), v)
                    args += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
                subprocess.run(args, check=True, capture_output=True)
                results["attnforge bf16"] = np.load(os.path.join(tmp, "o.npy"))
        for p in peers():
            try:
                results[p.name(variant)] = run_once(p, p.prepare(variant, inputs, 1))
            except Exception as e:  # reported, not fatal
                print(f"  {p.name(variant)}: {str(e)[:200]}", file=sys.stderr)
        openvino = results.get("OpenVINO SDPA bf16")
        for name, got in results.items():
            # Our fp16 kernels convert to float32 and round nothing they compute: no term for them.
            ours_fp16 = name.startswith("attnforge") and dtype_of(name) == "fp16"
            c = check(got, ref, 2e-3 if dtype_of(name) == "fp16" else 5e-3,
                      0.0 if ours_fp16 else term.get(dtype_of(name), 0.0))
            beside = ""
            openvino_error = check(openvino, ref)["max_abs_error"] if openvino is not None else 0.0
            if openvino_error > 0:
                beside = f"  ({c['max_abs_error'] / openvino_error:.2f}× OpenVINO bf16's)"
            print(f"  {name:40} max |error| {c['max_abs_error']:9.3g}  bound {c['bound']:8.3g}  "
                  f"{'ok' if c['ok'] else 'OUTSIDE the bound'}{beside}")


if __name__ == "__main__":
    main()
