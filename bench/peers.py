"""The peers: the same attention computed by PyTorch and ONNX Runtime, on our inputs (by name).

Each peer's prepare(variant, inputs, threads) returns a callable that computes the output from
NumPy inputs already converted once (conversion is not timed), or None when it has no equivalent.
Conventions match docs/contract.md §1: projections multiply on the right (x · W, W of shape (D_in, D_out)),
heads are contiguous column blocks, causal is top-left aligned, no biases.
"""
import numpy as np

HEADS = {"mha": (8, 8), "mha_causal": (8, 8), "gqa": (8, 2)}  # (Hq, Hkv) of the layer variants
CAUSAL = {"sdpa_causal", "mha_causal"}


class Torch:
    def __init__(self):
        import torch
        self.torch = torch
        self.version = torch.__version__

    def name(self, variant):
        return "PyTorch SDPA" if variant.startswith("sdpa") else (
            "PyTorch MultiheadAttention" if variant.startswith("mha") else "PyTorch linear+SDPA(enable_gqa)")

    def prepare(self, variant, inputs, threads):
        torch, F = self.torch, self.torch.nn.functional
        torch.set_num_threads(threads)
        t = {k: torch.from_numpy(v) for k, v in inputs.items()}
        causal = variant in CAUSAL
        if variant.startswith("sdpa"):
            return lambda: F.scaled_dot_product_attention(t["q"], t["k"], t["v"], is_causal=causal)
        if variant.startswith("mha"):
            D = t["x"].shape[-1]
            mha = torch.nn.MultiheadAttention(D, HEADS[variant][0], bias=False, batch_first=True).eval()
            with torch.no_grad():  # torch computes x · Wᵀ: its weights are ours transposed
                mha.in_proj_weight.copy_(torch.cat([t["wq"].T, t["wk"].T, t["wv"].T]))
                mha.out_proj.weight.copy_(t["wo"].T)
            L = t["x"].shape[1]
            mask = torch.nn.Transformer.generate_square_subsequent_mask(L) if causal else None
            x = t["x"]
            return lambda: mha(x, x, x, need_weights=False, attn_mask=mask, is_causal=causal)[0]
        if variant == "gqa":
            Hq, Hkv = HEADS[variant]
            x = t["x"]
            B, L, D = x.shape
            E = D // Hq

            def gqa():
                q = (x @ t["wq"]).view(B, L, Hq, E).transpose(1, 2)
                k = (x @ t["wk"]).view(B, L, Hkv, E).transpose(1, 2)
                v = (x @ t["wv"]).view(B, L, Hkv, E).transpose(1, 2)
                o = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                return o.transpose(1, 2).reshape(B, L, D) @ t["wo"]
            return gqa
        return None

    def run(self, f):
        with self.torch.inference_mode():
            return np.asarray(f())


class OnnxRuntime:
    """ONNX Runtime's CPU provider running the ONNX opset-23 Attention operator (4-D Q, K, V for
    sdpa; 3-D with q_num_heads/kv_num_heads for the layers, projections as MatMul)."""

    def __init__(self):
        import onnx
        import onnxruntime
        self.onnx, self.ort = onnx, onnxruntime
        self.version = onnxruntime.__version__

    def name(self, variant):
        return "ONNX Runtime Attention (opset 23)"

    def model(self, variant, inputs):
        from onnx import TensorProto, helper
        causal = int(variant in CAUSAL)
        graph_inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in inputs.items()]
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        if variant.startswith("sdpa"):
            nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=causal)]
        elif variant in HEADS:
            Hq, Hkv = HEADS[variant]
            nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"]),
                     helper.make_node("MatMul", ["x", "wk"], ["k"]),
                     helper.make_node("MatMul", ["x", "wv"], ["v"]),
                     helper.make_node("Attention", ["q", "k", "v"], ["a"], is_causal=causal,
                                      q_num_heads=Hq, kv_num_heads=Hkv),
                     helper.make_node("MatMul", ["a", "wo"], ["y"])]
        else:
            return None
        graph = helper.make_graph(nodes, variant, graph_inputs, [out])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])

    def prepare(self, variant, inputs, threads):
        m = self.model(variant, inputs)
        if m is None:
            return None
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = self.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        s = self.ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return lambda: s.run(None, inputs)[0]

    def run(self, f):
        return f()
