#!/usr/bin/env python3
"""A transformers model decoding over a KV cache of 8-bit codes, read in place by attnforge's kernels.

    cache = attnforge.transformers.QuantizedStaticCache(model.config, max_cache_len=..., storage="u8")
    model.generate(ids, cache=cache, max_new_tokens=...)    # attn_implementation="attnforge"

This example builds a Llama-3-8B-shaped model (32 query heads over 8 KV heads, E = 128; a few layers, random
weights, a small vocabulary and MLP), and generates greedily with attnforge over a QuantizedStaticCache of each
storage ("u8", "i8", "i8_g32", "u8_kc128") and over transformers' StaticCache, and with sdpa over a StaticCache. It
prints the cache's bytes, the time per generated token and how many greedy tokens agree with sdpa's (quantization
moves the logits a little: with random weights the top two are often close, so tokens may part after a while), and
checks the logits of the first step that reads the codes (the second generated token's) against sdpa's over a float
cache within a bound that holds the quantization error. Run by CTest (examples.python_quantized_kv_cache): exits non-zero
when a check fails, 77 (skipped) where torch or transformers is not installed.

    .venv/bin/python examples/python/quantized_kv_cache.py [--prompt 256] [--new-tokens 16] [--layers 2]
"""
import argparse
import sys
import time

try:
    import torch
    import transformers
except ImportError:  # tools/bootstrap build installs neither (test does): CTest reports the example skipped
    print("skipped: this example needs torch and transformers (tools/bootstrap test installs them)")
    sys.exit(77)

import attnforge.transformers
from transformers_generate import build, model_configs


def cache_bytes(cache):
    """The bytes a cache's buffers hold (codes, scales and a by-channel cache's open block, or float keys and
    values)."""
    names = ("keys", "values", "key_scale", "value_scale", "key_zero", "value_zero", "key_open_block")
    return sum(t.numel() * t.element_size() for layer in cache.layers for t in
               (getattr(layer, n, None) for n in names) if isinstance(t, torch.Tensor))


def run(model, ids, cache, new_tokens):
    """(greedy tokens, the logits of the first step over the codes, seconds per token); the cache is filled."""
    with torch.no_grad():
        start = time.perf_counter()
        out = model.generate(ids, cache=cache, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                             pad_token_id=0, output_logits=True, return_dict_in_generate=True)
        total = time.perf_counter() - start
    return out.sequences[:, ids.shape[1]:], out.logits[1], total / new_tokens


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompt", type=int, default=256)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    if args.new_tokens < 2:
        parser.error("--new-tokens must be at least 2: the second token is the first step over the codes")
    attnforge.transformers.register()
    name, cls, config = next(m for m in model_configs(args.layers, 1024, mlp=1024) if m[0] == "Llama-3-8B")
    ids = torch.randint(1, 1024, (1, args.prompt), generator=torch.Generator().manual_seed(1))
    slots = args.prompt + args.new_tokens
    sdpa, ours = build(cls, config, "sdpa", torch.float32), build(cls, config, "attnforge", torch.float32)
    ref_cache = transformers.StaticCache(config=sdpa.config, max_cache_len=slots)
    ref_tokens, ref_logits, ref_time = run(sdpa, ids, ref_cache, args.new_tokens)
    print(f"{name}-shaped, {args.layers} layers, prompt {args.prompt}, {args.new_tokens} new tokens, float32")
    print(f"{'implementation':10} {'cache':16} {'cache MB':>9} {'ms/token':>9}  tokens as sdpa's  "
          "logits over the codes")
    print(f"{'sdpa':10} {'StaticCache':16} {cache_bytes(ref_cache) / 1e6:9.2f} {ref_time * 1e3:9.2f}  reference")
    failed = False
    for storage in (None, "u8", "i8", "i8_g32", "u8_kc128"):
        cache = (transformers.StaticCache(config=ours.config, max_cache_len=slots) if storage is None else
                 attnforge.transformers.QuantizedStaticCache(ours.config, max_cache_len=slots, storage=storage))
        tokens, logits, per_token = run(ours, ids, cache, args.new_tokens)
        same = int((tokens == ref_tokens).cumprod(1).sum())
        err = (logits - ref_logits).abs().max().item()
        # float: §5 through the model; 8-bit codes: their quantization error (a step of 1/255 of a token's range,
        # 1/127 of its largest magnitude), which moves these random models' logits by a few 10⁻².
        bound = (2e-4 if storage is None else 5e-2) * (1 + ref_logits.abs().max().item())
        ok = err <= bound and (storage is not None or same == args.new_tokens)
        failed |= not ok
        label = "StaticCache" if storage is None else f"Quantized {storage}"
        print(f"{'attnforge':10} {label:16} {cache_bytes(cache) / 1e6:9.2f} {per_token * 1e3:9.2f}  "
              f"{same:2} of {args.new_tokens}         {err:.1e} (bound {bound:.1e}){'' if ok else '  FAILED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
