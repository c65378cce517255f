#!/usr/bin/env python3
"""Whole models in transformers with attn_implementation = attnforge, sdpa and flex_attention (eager where sdpa
refuses the model: Gemma-2's soft-cap): the prompt's time (prefill), the time per generated token (decode), and the
part of each spent in attention (the model's attention function, timed around every call), per implementation.

The models are examples/python/transformers_generate.py's: Llama-3-8B, Qwen2.5-7B and Gemma-2-2B as published
(hidden size, heads, KV heads, head width, MLP width, soft-cap, window) with random weights, `--layers` layers and
a vocabulary of 4096 (the LM head of 128k-256k entries is not attention's business and would dominate decode).
Outputs first: every implementation's greedy tokens and prompt logits against the first's (the same weights).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/transformers_e2e.py --batch 1 --prompt 4096 --cache static \\
        --threads 2 --out results.json

Decode: `--new-tokens` steps after the prompt, each a forward of one token per sequence through the model's
cache (dynamic: the concatenated keys; static: buffers of prompt + new tokens slots, as generate() makes them;
u8, i8, i8_g32, u8_kc128: attnforge.transformers.QuantizedStaticCache of that storage, whose codes only attnforge
reads, so the cell's other implementations run over a static cache and its first is the reference; fp8:
transformers' QuantizedCache(backend="fp8"), which hands every implementation the whole cache dequantized at each
step); the median step. Prefill: the median of `--prefill-repeats` forwards of the prompt into an empty cache, after a warm-up of
the same prompt and a step (a compiling implementation, flex_attention, compiles there).
"""
import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import time

import torch
import transformers
from transformers.modeling_utils import AttentionInterface

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "python"))
from transformers_generate import build, model_configs  # noqa: E402

import attnforge  # noqa: E402
import attnforge.transformers  # noqa: E402

ATTENTION_SECONDS = [0.0]


def time_attention_functions():
    """Every attention function a model looks up (at each forward) is returned timed: the seconds accumulate in
    ATTENTION_SECONDS, whichever implementation it is (eager is a model's own function, not in the registry)."""
    lookup = AttentionInterface.get_interface

    def timed_lookup(self, implementation, default):
        function = lookup(self, implementation, default)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            result = function(*args, **kwargs)
            ATTENTION_SECONDS[0] += time.perf_counter() - start
            return result
        return timed
    AttentionInterface.get_interface = timed_lookup


# Cache kinds of attnforge.transformers.QuantizedStaticCache: codes that only attnforge's attention function reads.
OUR_QUANTIZED = ("u8", "i8", "i8_g32", "u8_kc128")


def make_cache(model, kind, batch, length):
    if kind == "static":
        return transformers.StaticCache(config=model.config, max_cache_len=length)
    if kind in OUR_QUANTIZED:
        return attnforge.transformers.QuantizedStaticCache(model.config, max_cache_len=length, storage=kind)
    if kind == "fp8":
        return transformers.QuantizedCache(backend="fp8", config=model.config)
    return transformers.DynamicCache(config=model.config)


def forward(model, ids, mask, cache, position):
    """One forward through the cache at `position` (tokens already in it): the last position's logits."""
    length = ids.shape[1]
    cache_position = torch.arange(position, position + length)
    with torch.no_grad():
        out = model(ids, attention_mask=mask[:, : position + length], past_key_values=cache,
                    cache_position=cache_position, use_cache=True)
    return out.logits[:, -1]


def measure(model, ids, mask, cache_kind, new_tokens, prefill_repeats):
    """(prefill s, its attention s, median decode step s, that step's attention s, tokens, prompt logits, the
    margin between the two largest logits at each step (the smallest over the batch))."""
    batch, prompt = ids.shape
    total = prompt + new_tokens
    full_mask = torch.cat([mask, torch.ones(batch, new_tokens, dtype=mask.dtype)], dim=1)
    # Warm-up: the prompt and a step, as timed below (allocations, first calls, a compiling peer's compilation).
    warm = make_cache(model, cache_kind, batch, total)
    logits = forward(model, ids, full_mask, warm, 0)
    forward(model, logits.argmax(-1, keepdim=True), full_mask, warm, prompt)
    del warm
    prefills = []
    for _ in range(prefill_repeats):  # the median prefill, each into an empty cache; the last one's goes on
        cache = make_cache(model, cache_kind, batch, total)
        ATTENTION_SECONDS[0] = 0.0
        start = time.perf_counter()
        logits = forward(model, ids, full_mask, cache, 0)
        prefills.append((time.perf_counter() - start, ATTENTION_SECONDS[0]))
    prefill = statistics.median(t for t, _ in prefills)
    prefill_attention = statistics.median(a for _, a in prefills)
    prompt_logits = logits.float()
    tokens, steps, margins = [], [], []
    for step in range(new_tokens):
        token = logits.argmax(-1, keepdim=True)
        tokens.append(token)
        top = logits.float().topk(2, dim=-1).values
        margins.append((top[:, 0] - top[:, 1]).min().item())
        if step == new_tokens - 1:
            break
        ATTENTION_SECONDS[0] = 0.0
        start = time.perf_counter()
        logits = forward(model, token, full_mask, cache, prompt + step)
        steps.append((time.perf_counter() - start, ATTENTION_SECONDS[0]))
    step_time = statistics.median(s for s, _ in steps)
    step_attention = statistics.median(a for _, a in steps)
    return prefill, prefill_attention, step_time, step_attention, torch.cat(tokens, 1), prompt_logits, margins


def compare(tokens, logits, reference):
    """Greedy tokens and the last prompt position's logits against the reference implementation's."""
    ref_tokens, ref_logits, ref_margins = reference
    apart = (logits - ref_logits).abs().max().item()
    differ = (tokens != ref_tokens).any(0).nonzero()
    if differ.numel() == 0:
        return f"same tokens, logits {apart:.1e}"
    at = int(differ[0, 0])  # random weights: near-ties; how near was the reference's choice there?
    return f"tokens differ from step {at} (reference's top-two margin there {ref_margins[at]:.1e}), logits {apart:.1e}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="Llama-3-8B,Qwen2.5-7B,Gemma-2-2B")
    parser.add_argument("--batch", default="1,4")
    parser.add_argument("--prompt", default="512,4096")
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--dtype", default="float32,bfloat16")
    parser.add_argument("--cache", default="dynamic,static")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--implementations", default="sdpa,attnforge,flex_attention",
                        help="the first is the reference the others' outputs are compared with")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--prefill-repeats", type=int, default=3,
                        help="prefills timed (the median): a single one varies by up to ±10 %% at prompt 512")
    parser.add_argument("--out", help="JSON file of the rows")
    args = parser.parse_args()
    split = lambda text, kind=str: [kind(x) for x in text.split(",")]  # noqa: E731
    attnforge.transformers.register()
    time_attention_functions()
    g = torch.Generator().manual_seed(1)
    rows = []
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; {args.layers} layers, vocabulary "
          f"4096; ms (attention's part); decode: median of {args.new_tokens - 1} steps")
    print(f"{'model':11} {'B':>2} {'prompt':>6} {'dtype':8} {'cache':7} {'thr':>3} {'implementation':15} "
          f"{'prefill ms':>16} {'decode ms/token':>18}  outputs")
    prompts = {}  # (B, prompt) -> (ids, mask): the same tokens for every cache, thread count and implementation
    for name, cls, config in model_configs(args.layers, 4096):
        if name not in split(args.models):
            continue
        for dtype_name in split(args.dtype):
            implementations = [("eager" if i == "sdpa" and name.startswith("Gemma") else i)
                               for i in split(args.implementations)]
            # One model, its attention switched between implementations: separate instances' weights land in
            # memory differently (huge pages or not), which moved the rest of a step by up to ±6 %.
            model = build(cls, config, implementations[0], getattr(torch, dtype_name))
            for batch, prompt, cache, threads in itertools.product(split(args.batch, int), split(args.prompt, int),
                                                                   split(args.cache), split(args.threads, int)):
                if (batch, prompt) not in prompts:
                    ids = torch.randint(1, 4096, (batch, prompt), generator=g)
                    mask = torch.ones_like(ids)
                    mask[1:, : prompt // 8] = 0  # left padding beside the first, full, prompt
                    prompts[batch, prompt] = ids, mask
                torch.set_num_threads(threads)
                attnforge.set_default_threads(threads)
                cell = dict(model=name, batch=batch, prompt=prompt, dtype=dtype_name, cache=cache, threads=threads)
                label = f"{name:11} {batch:2} {prompt:6} {dtype_name:8} {cache:7} {threads:3}"
                reference = None
                for implementation in implementations:
                    model.set_attn_implementation(implementation)
                    # Our codes are attnforge's to read: the others run the cell over a static cache.
                    kind = "static" if cache in OUR_QUANTIZED and implementation != "attnforge" else cache
                    try:
                        result = measure(model, *prompts[batch, prompt], kind, args.new_tokens, args.prefill_repeats)
                    except Exception as error:  # a peer that cannot run this cell: say why
                        lines = str(error).splitlines() or [type(error).__name__]
                        why = f"{type(error).__name__}: " + next((l for l in lines if "error:" in l), lines[0]).strip()
                        print(f"{label} {implementation:15} failed: {why[:200]}")
                        rows.append(dict(cell, implementation=implementation, cache_read=kind, failed=why))
                        continue
                    prefill, prefill_att, step, step_att, tokens, logits, margins = result
                    if reference is None:
                        reference, check = (tokens, logits, margins), "reference"
                    else:
                        check = compare(tokens, logits, reference)
                    rows.append(dict(cell, implementation=implementation, cache_read=kind, prefill_ms=prefill * 1e3,
                                     prefill_attention_ms=prefill_att * 1e3, decode_ms=step * 1e3,
                                     decode_attention_ms=step_att * 1e3, new_tokens=args.new_tokens,
                                     layers=args.layers, check=check))
                    shown = implementation + (f" ({kind})" if kind != cache else "")
                    print(f"{label} {shown:15} {prefill * 1e3:8.1f} ({prefill_att * 1e3:7.1f}) "
                          f"{step * 1e3:9.2f} ({step_att * 1e3:7.2f})  {check}", flush=True)
                    if args.out:
                        with open(args.out, "w") as f:
                            json.dump(rows, f, indent=1)

if __name__ == "__main__":
    main()
