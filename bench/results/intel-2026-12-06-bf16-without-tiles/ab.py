#!/usr/bin/env python3
"""A/B of two builds' prefill kernels in bf16, fp16 and float32, alternated cell by cell and round by round:
the rule's kernel's median ms (`attnforge bench --chosen-only --json`) per (cell, dtype, threads, build), then the
median over rounds. usage: ab.py OLD_ATTNFORGE NEW_ATTNFORGE [ROUNDS] > out.txt"""
import json, statistics, subprocess, sys

old, new = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
cells = [("mha", 512), ("mha", 2048), ("self_attention_layer", 512), ("self_attention_layer", 2048),
         ("sdpa", 2048), ("sdpa_causal", 2048)]
times = {}
for r in range(rounds):
    for variant, length in cells:
        for dtype in ("bf16", "fp16", "float32"):
            if dtype == "fp16" and variant not in ("mha", "sdpa", "sdpa_causal"):
                continue
            for threads in (1, 2):
                for build, exe in (("old", old), ("new", new)):
                    out = subprocess.run([exe, "bench", variant, "--length", str(length), "--threads", str(threads),
                                          "--chosen-only", "--no-interpreter", "--dtype", dtype, "--json"],
                                         capture_output=True, text=True, check=True).stdout
                    row = json.loads(out[out.index("\n[") + 1:])[0]
                    times.setdefault((variant, length, dtype, threads, build), []).append(row["ms"])
                    print(r, build, variant, length, dtype, threads, f"{row['ms']:.3f}", row["engine"], row["peak"],
                          f"{row['fraction_of_peak']:.3f}", f"{row['fma_peak_gflops']:.1f}", flush=True, file=sys.stderr)
print(f"{'cell':<26} {'dtype':<8} {'thr':>3} {'old ms':>9} {'new ms':>9} {'old/new':>8} {'float32 new ms':>15}")
for variant, length in cells:
    for dtype in ("bf16", "fp16", "float32"):
        for threads in (1, 2):
            key = (variant, length, dtype, threads)
            if key + ("old",) not in times:
                continue
            o, n = (statistics.median(times[key + (b,)]) for b in ("old", "new"))
            f32 = statistics.median(times[(variant, length, "float32", threads, "new")])
            print(f"{variant + ' L=' + str(length):<26} {dtype:<8} {threads:>3} {o:>9.2f} {n:>9.2f} {o / n:>8.2f} {f32:>15.2f}")
