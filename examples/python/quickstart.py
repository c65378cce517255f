#!/usr/bin/env python3
"""attnforge from Python in one page: inputs made with torch, three variants run on them (no copy of the
inputs), each compared with PyTorch's own attention in float64, and an attention map drawn.

    .venv/bin/python examples/python/quickstart.py [--png attention_map.png]

Run by CTest (examples.python_quickstart); exits non-zero if a result is outside docs/contract.md §5, 77
(skipped) where torch is not installed.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import attnforge
import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # tools/bootstrap build installs no torch (test does): CTest reports the example skipped
    print("skipped: this example needs torch (tools/bootstrap test installs it)")
    sys.exit(77)


def check(name, got, expected):
    err = (got.double() - expected).abs().max().item()
    limit = 1e-4 * (1 + expected.abs().max().item())  # contract §5 (small logits: no score-rounding term)
    print(f"{name:<26} {str(tuple(got.shape)):<20} max |attnforge - PyTorch| = {err:.2e}  (bound {limit:.1e})")
    return err <= limit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--png", default="attention_map.png", help="where to draw the attention map")
    parser.add_argument("--cli", default=os.environ.get("ATTNFORGE_CLI") or shutil.which("attnforge"),
                        help="the attnforge program, for `attnforge viz` when matplotlib is not installed")
    args = parser.parse_args()

    torch.manual_seed(0)
    B, H, L, E = 1, 4, 96, 64
    q, k, v = (torch.randn(B, H, L, E) for _ in range(3))
    ok = True

    # 1. Causal attention: attnforge reads the torch tensors in place and returns a torch tensor.
    y = attnforge.run("sdpa_causal", q=q, k=k, v=v)
    ok &= check("sdpa_causal", y, F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True))

    # 2. Sliding window (each query sees itself and the 128 keys before it), here wider than L = 96 so that
    #    it equals causal; a longer sequence shows the window.
    long_q, long_k, long_v = (torch.randn(B, H, 300, E) for _ in range(3))
    i, j = torch.arange(300)[:, None], torch.arange(300)[None, :]
    window = (j <= i) & (i - j <= 128)
    y = attnforge.run("sliding_window_attention", q=long_q, k=long_k, v=long_v)
    ok &= check("sliding_window_attention", y,
                F.scaled_dot_product_attention(long_q.double(), long_k.double(), long_v.double(), attn_mask=window))

    # 3. Decoding with grouped heads (Llama-3-8B's shape: 32 query heads, 8 key/value heads of width 128) over
    #    a cache of 512 entries filled to 300 and 17: a kernel bound once to its sizes, called into out=.
    cache_q = torch.randn(2, 32, 1, 128)
    cache_k, cache_v = torch.randn(2, 8, 512, 128), torch.randn(2, 8, 512, 128)
    kv_length = torch.tensor([300, 17], dtype=torch.int32)
    step = attnforge.kernel("decode_gqa", B=2, Lq=1, Lkv=512)
    out = torch.empty(step.output_shape)
    step(q=cache_q, k=cache_k, v=cache_v, kv_length=kv_length, out=out)
    seen = torch.arange(512)[None, :] < kv_length[:, None].long()  # (B, Lkv)
    expected = F.scaled_dot_product_attention(cache_q.double(), cache_k.double(), cache_v.double(),
                                              attn_mask=seen[:, None, None, :], enable_gqa=True)
    ok &= check(f"decode_gqa ({step.strategy})", out, expected)

    # An attention map: the weights of the first example, drawn with matplotlib or `attnforge viz`.
    weights = attnforge.run("sdpa_causal", result="attention_weights", q=q, k=k, v=v)
    assert torch.allclose(weights.sum(-1), torch.ones(B, H, L), atol=1e-5)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, H, figsize=(3 * H, 3))
        for h, ax in enumerate(axes):
            ax.imshow(weights[0, h].numpy(), cmap="viridis")
            ax.set_title(f"head {h}")
        fig.savefig(args.png)
        print(f"attention map (matplotlib): {args.png}")
    except ImportError:
        if not args.cli:
            sys.exit("matplotlib is not installed and no attnforge program was given (--cli) to draw the map")
        with tempfile.TemporaryDirectory() as d:
            files = []
            for name, t in (("q", q), ("k", k), ("v", v)):
                np.save(os.path.join(d, f"{name}.npy"), t.numpy())
                files += ["--input", f"{name}={os.path.join(d, name)}.npy"]
            subprocess.run([args.cli, "viz", "sdpa_causal", *files, "--png", args.png, "--head", "0", "--max-rows", "2"],
                           check=True)
        print(f"attention map (attnforge viz): {args.png}")
    if not os.path.getsize(args.png):
        sys.exit("the attention map is empty")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
