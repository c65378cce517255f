"""PyTorch's attn_mask as a model passes it (docs/contract.md §1), attnforge beside PyTorch SDPA on the same inputs.

A padded batch as transformers prefills it: B = 2, the second sequence left-padded by a quarter of L, a causal mask
combined with the padding, (B, 1, L, L) (broadcast over the heads); q, k, v as (B, H, L, E) views of (B, L, H, E)
buffers (what a model's projections give) and the output written as (B, L, H, E) through out=, no copy on either side.
  sdpa_masked          the whole bool mask (causal & padding), as transformers' sdpa path passes it
  sdpa_causal_masked   the padding alone as a bool mask, causal inside the kernel (what our own mask function
                       will pass, issue "PyTorch and transformers")
  sdpa_additive        the whole mask as a float one, 0 or −inf (transformers' eager/float masks)
PyTorch: F.scaled_dot_product_attention(q, k, v, attn_mask=the whole mask (bool, or float), enable_gqa), the
transposed views as given. attnforge: its Python module (attnforge.run with out=, the call a model's attention
function makes). Rows the mask removes wholly (the padding's queries) are zeros in ours, NaN in torch: compared on the
other rows, against a float64 reference, within 1e-4·(1 + max|ref|) + the float32 score term of §5. Times: median of
bench/timing.py's protocol. GFLOP/s count the pairs the mask keeps (4·E flops each): what a kernel that skips
perfectly would do.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/torch_masks.py --attnforge build/tools/attnforge/attnforge \
        [--length 2048] [--threads 1,2] [--out results.json]
"""
import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timing  # noqa: E402
from ours_python import OursPython  # noqa: E402

SHAPES = [("GPT-2", 12, 12, 64), ("Llama-3-8B", 32, 8, 128)]
VARIANTS = ["sdpa_masked", "sdpa_causal_masked", "sdpa_additive"]


def padded_causal(B, L):
    """(B, 1, L, L) bool: causal, the second entry's first L/4 positions padding (left padding), and the padding."""
    import torch
    pad = torch.zeros(B, L, dtype=torch.bool)
    pad[1:, : L // 4] = True
    keys = ~pad[:, None, None, :]
    return torch.ones(L, L, dtype=torch.bool).tril()[None, None] & keys, keys.expand(B, 1, L, L)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnforge", required=True, help="the attnforge command line tool (its build's Python module)")
    ap.add_argument("--length", type=int, default=2048)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    ours = OursPython(args.attnforge).module
    B, L = 2, args.length
    whole, padding = padded_causal(B, L)
    rows = []
    for name, H, Hkv, E in SHAPES:
        g = torch.Generator().manual_seed(H * 1000 + E)
        q, k, v = (torch.rand(B, L, h, E, generator=g).mul_(2).sub_(1).transpose(1, 2) for h in (H, Hkv, Hkv))
        live = int(whole.sum()) * H  # kept pairs over the batch and the heads
        flops = 4.0 * E * live
        ref = F.scaled_dot_product_attention(*(t.double() for t in (q, k, v)), attn_mask=whole, enable_gqa=True)
        kept_rows = whole.any(-1).expand(B, H, L)  # rows with a key
        largest = (q.double().abs() @ k.double().abs().repeat_interleave(H // Hkv, 1).transpose(-1, -2)).max().item()
        tolerance = 1e-4 * (1 + ref.abs().max().item()) + 2 * math.sqrt(E) * 2.0 ** -24 * largest / math.sqrt(E)
        additive = torch.zeros(whole.shape).masked_fill_(~whole, -math.inf)
        for threads in [int(t) for t in args.threads.split(",")]:
            torch.set_num_threads(threads)
            for variant in VARIANTS:
                mask = {"sdpa_masked": whole, "sdpa_causal_masked": padding, "sdpa_additive": additive}[variant]
                theirs_mask = additive if variant == "sdpa_additive" else whole
                out = torch.empty(B, L, H, E)

                def call_ours():
                    return ours.run(variant, q=q, k=k, v=v, attn_mask=mask, threads=threads, out=out.transpose(1, 2))

                def call_torch():
                    with torch.inference_mode():
                        return F.scaled_dot_product_attention(q, k, v, attn_mask=theirs_mask, enable_gqa=True)

                errors = {}
                for who, call in (("attnforge", call_ours), ("PyTorch SDPA", call_torch)):
                    got = call().double()
                    errors[who] = (got - ref)[kept_rows].abs().max().item()
                    if errors[who] > tolerance:
                        raise SystemExit(f"{who} {variant} {name}: error {errors[who]} > {tolerance}")
                times = {who: timing.time_batch(call) for who, call in
                         (("attnforge", call_ours), ("PyTorch SDPA", call_torch))}
                row = {"model": name, "H": H, "Hkv": Hkv, "E": E, "B": B, "L": L, "threads": threads,
                       "variant": variant, "live_fraction": live / (B * H * L * L),
                       "ms": {w: t * 1e3 for w, t in times.items()},
                       "gflops": {w: flops / t / 1e9 for w, t in times.items()},
                       "speedup_vs_torch": times["PyTorch SDPA"] / times["attnforge"], "max_error": errors}
                rows.append(row)
                print(f"{name:11s} E={E:3d} {threads}t {variant:18s} ours {row['ms']['attnforge']:8.2f} ms "
                      f"({row['gflops']['attnforge']:6.1f} GFLOP/s)  torch {row['ms']['PyTorch SDPA']:8.2f} ms  "
                      f"{row['speedup_vs_torch']:.2f}x", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
