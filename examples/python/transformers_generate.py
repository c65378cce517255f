#!/usr/bin/env python3
"""attnforge inside transformers: one line switches a model's attention to attnforge's kernels.

    import attnforge.transformers
    attnforge.transformers.register()
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="attnforge")

This example builds Llama-3-8B-, Qwen2.5-7B- and Gemma-2-2B-shaped models from their configurations with random
weights (no download: a few layers, the real attention shapes, a smaller vocabulary and MLP), generates greedily
with attn_implementation="attnforge" and with "sdpa" ("eager" for Gemma-2: transformers' sdpa refuses its
soft-cap), and prints the prefill time, the time per generated token, whether the tokens are the same and how far
the prompt's logits are apart.

    .venv/bin/python examples/python/transformers_generate.py [--prompt 128] [--new-tokens 16] [--cache static]

Run by CTest (examples.python_transformers); exits non-zero if the tokens differ or the logits are further apart
than the bound below, 77 (skipped) where torch or transformers is not installed.
"""
import argparse
import copy
import sys
import time

try:
    import torch
    import transformers
except ImportError:  # tools/bootstrap build installs neither (test does): CTest reports the example skipped
    print("skipped: this example needs torch and transformers (tools/bootstrap test installs them)")
    sys.exit(77)

import attnforge.transformers


def model_configs(layers, vocab, mlp=None):
    """(name, model class, config): each model's attention as published (heads, KV heads, head width, scale,
    soft-cap, window), `layers` layers, a vocabulary of `vocab` and an MLP of width `mlp` (None: as published)."""
    common = dict(num_hidden_layers=layers, vocab_size=vocab, max_position_embeddings=8192)
    width = lambda published: dict(intermediate_size=mlp or published)  # noqa: E731
    return [
        ("Llama-3-8B", transformers.LlamaForCausalLM, transformers.LlamaConfig(
            hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, rope_theta=500000.0, **width(14336),
            **common)),
        ("Qwen2.5-7B", transformers.Qwen2ForCausalLM, transformers.Qwen2Config(
            hidden_size=3584, num_attention_heads=28, num_key_value_heads=4, rope_theta=1000000.0, **width(18944),
            **common)),
        ("Gemma-2-2B", transformers.Gemma2ForCausalLM, transformers.Gemma2Config(
            hidden_size=2304, num_attention_heads=8, num_key_value_heads=4, head_dim=256, sliding_window=4096,
            attn_logit_softcapping=50.0, final_logit_softcapping=30.0, query_pre_attn_scalar=256, **width(9216),
            **common)),
    ]


def build(cls, config, implementation, dtype):
    config = copy.deepcopy(config)
    config._attn_implementation = implementation
    torch.manual_seed(0)  # the same random weights for every implementation
    return cls(config).eval().to(dtype)


def generate(model, ids, mask, new_tokens, cache):
    """Greedy tokens, the prefill's time and the time per generated token (s), through generate()'s own loop."""
    options = dict(attention_mask=mask, do_sample=False, pad_token_id=0)
    if cache == "static":
        options["cache_implementation"] = "static"
    with torch.no_grad():
        start = time.perf_counter()
        model.generate(ids, max_new_tokens=1, **options)
        prefill = time.perf_counter() - start
        start = time.perf_counter()
        tokens = model.generate(ids, max_new_tokens=new_tokens, **options)
        total = time.perf_counter() - start
    return tokens, prefill, max(total - prefill, 0.0) / max(new_tokens - 1, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="Llama-3-8B,Qwen2.5-7B,Gemma-2-2B")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--prompt", type=int, default=128, help="prompt tokens per sequence")
    parser.add_argument("--batch", type=int, default=2, help="sequences; the second and later are left-padded")
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--cache", choices=["dynamic", "static"], default="dynamic")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    attnforge.transformers.register()

    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 4096, (args.batch, args.prompt), generator=g)
    mask = torch.ones_like(ids)
    mask[1:, : args.prompt // 8] = 0  # shorter prompts, left-padded as generate() batches them

    failures = 0
    print(f"B = {args.batch}, prompt {args.prompt}, {args.new_tokens} new tokens, {args.cache} cache, {args.dtype}, "
          f"{args.layers} layers, {torch.get_num_threads()} threads")
    print(f"{'model':12} {'attention':10} {'prefill ms':>11} {'ms/token':>9}   same tokens   logits apart (bound)")
    for name, cls, config in model_configs(args.layers, 4096, 1024):
        if name not in args.models.split(","):
            continue
        baseline = "eager" if name.startswith("Gemma") else "sdpa"
        results = {}
        for implementation in (baseline, "attnforge"):
            model = build(cls, config, implementation, dtype)
            tokens, prefill, per_token = generate(model, ids, mask, args.new_tokens, args.cache)
            with torch.no_grad():
                logits = model(ids, attention_mask=mask).logits.float()
            results[implementation] = tokens, logits
            line = f"{name:12} {implementation:10} {prefill * 1e3:11.1f} {per_token * 1e3:9.2f}"
            if implementation == "attnforge":
                same = torch.equal(tokens, results[baseline][0])
                expected = results[baseline][1][mask.bool()]
                apart = (logits[mask.bool()] - expected).abs().max().item()
                # §5 per attention call, carried through the layers after it (as tests/python/test_transformers.py)
                bound = (2e-4 if dtype == torch.float32 else 6e-2) * (1 + expected.abs().max().item())
                line += f"   {'yes' if same else 'NO':11}   {apart:.2e} ({bound:.2e})"
                failures += (not same) + (apart > bound)
            print(line, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
