#!/usr/bin/env python3
"""attnforge against its peers, side by side (issue "Performance"; run through bench/run).

For every shape of the grid and every thread count: ours (the kernel the rule picks), Halide's
Adams2019 autoscheduler on our lowered pipeline, PyTorch and ONNX Runtime, on the same shapes.
Protocol: implementations interleaved round-robin, `--rounds` rounds; each round one batch per
implementation (a 0.2 s pause for the previous implementation's idle threads to stop spinning, a warm-up, then
calls until 3 calls and 0.5 s), its median; reported: the median of
the batch medians (Halide Adams2019, 5-10× slower than the rest, is timed in the first round only).
Each round starts with `attnforge bench` measuring the FMA peak; a round whose peak is below 85% of
the best peak seen for that thread count ran on a machine that was not quiet (another tenant's
work), so it is discarded and taken again (at most 3 times per cell; the count is reported). Every
% of peak uses the peak of the kept rounds. Flops are the dense count (causal counted dense) for everyone.
Before timing a shape, each peer's output is checked against ours on the same random inputs
(docs/contract.md §5: max|peer − ours| ≤ 1e-4·(1 + max|ours|)).

Decode cells (variants decode, H = 8, and decode_gqa; B 1 and 8, Lq 1 and 4, Lk 1024, 4096 and 32768, a full
cache: kv_length = Lk) follow the same protocol against the decode peers of bench/decode_peers.py (PyTorch
SDPA, ONNX Runtime GroupQueryAttention, OpenVINO's stateful SDPA); every output there, ours included, is
checked against decode_peers.decode_reference (float64 NumPy) with the same bound. Besides ms they report the
K+V cache bytes read per call over the time (GB/s) and, where `attnforge bench --json` gives a measured read
bandwidth (read_bandwidth_gbs: the median of probe passes run between its calls), the fraction of it: ours the
median over rounds of each round's against its own probe, a peer's against the rounds' median probe. Each batch,
ours and the peers', starts after a pause (bench/timing.py: ONNX Runtime's idle workers spin ~50 ms after a call,
taking a core from whatever runs next). A variant that `attnforge list --json`
does not list is left out with a message.

Flex cells (`--flex`, instead of the grids above; bench/flex_peers.py): the flexible variants sliding_window_attention,
prefix_lm_attention, document_attention, alibi_attention, softcap_attention, relative_position_attention and
mha_causal_padding at B = 1, H = 8, L 512, 2048 and 8192 (`--quick`: 256, one thread), against FlexAttention
(torch.compile, score_mod / block mask; its compile seconds reported apart), PyTorch SDPA and OpenVINO SDPA with a
dense mask. Index inputs: 4 equal documents, prefix_length L/4, keys padded from 3L/4. Each cell's inputs are saved
as .npy and given to attnforge too (`attnforge run` for the check, `attnforge bench --input` for the time), so every
implementation sees the same documents, prefixes and padding; every output, ours included, is checked against
flex_peers.reference (float64 NumPy) over the rows that have an allowed key. Rows also carry the live fraction of
64 x 64 blocks; at the largest L, document_attention is also timed with 1, 2, 8 and 16 documents and
prefix_lm_attention with prefixes 0, L/8, L/2 and L (ours and FlexAttention only: the dense-mask peers do the same
work whatever the documents or the prefix).
Calls are timed until 3 calls and 0.3 s per batch (ours: `--min-seconds 0.3`).
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

# PyTorch's OpenMP threads spin between calls unless told otherwise, stealing the cores the next
# implementation in the round-robin runs on; set before any peer is imported (bench/run sets it too).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import decode_peers  # noqa: E402
import flex_peers  # noqa: E402
import peers as peer_modules  # noqa: E402
import report  # noqa: E402
from ours_python import NAME as OURS_PYTHON, OursPython  # noqa: E402
from timing import settle, time_batch  # noqa: E402

E, H, D = 64, 8, 512


def grid(quick):
    if quick:
        return [("sdpa", 1, 128), ("sdpa_causal", 1, 128), ("mha", 1, 128), ("gqa", 1, 128)]
    g = [(v, 1, L) for v in ("sdpa", "sdpa_causal") for L in (128, 512, 2048, 8192)]
    g += [(v, B, L) for v in ("mha", "mha_causal") for B in (1, 4) for L in (128, 512, 2048)]
    return g + [("gqa", 1, 2048)]


DECODE_HEADS = {"decode": (8, 8, 64), "decode_gqa": (32, 8, 128)}  # (Hq, Hkv, E) of the grid


def decode_grid(quick):
    """(variant, B, Lq, Lk) cells; the cache is full (kv_length = Lk for every batch entry)."""
    if quick:
        return [("decode", 1, 1, 1024), ("decode_gqa", 1, 4, 1024)]
    return [(v, B, Lq, Lk) for v in DECODE_HEADS for B in (1, 8) for Lq in (1, 4) for Lk in (1024, 4096, 32768)]


def make_decode_inputs(variant, B, Lq, Lk, rng):
    Hq, Hkv, E = DECODE_HEADS[variant]
    return {"q": rng.standard_normal((B, Hq, Lq, E), dtype=np.float32),
            "k": rng.standard_normal((B, Hkv, Lk, E), dtype=np.float32),
            "v": rng.standard_normal((B, Hkv, Lk, E), dtype=np.float32),
            "kv_length": np.full(B, Lk, dtype=np.int32)}


def decode_shape(variant, B, Lq, Lk):
    Hq, Hkv, E = DECODE_HEADS[variant]
    return f"B={B} Lq={Lq} Lk={Lk} Hq={Hq} Hkv={Hkv} E={E}"


def decode_kv_bytes(variant, B, Lk):
    """The K and V cache bytes a decode call reads (float32)."""
    _, Hkv, E = DECODE_HEADS[variant]
    return 2 * B * Hkv * Lk * E * 4


FLEX_DOCUMENTS = (1, 2, 4, 8, 16)  # document_attention at the largest L: time against the number of documents
FLEX_PREFIXES = (0, 1 / 8, 1 / 4, 1 / 2, 1)  # prefix_lm_attention at the largest L: prefix_length / L
FLEX_MIN_SECONDS = 0.3


FLEX_PROTOCOL = """implementations interleaved round-robin, `--rounds` rounds; each round one batch per implementation
(a 0.2 s pause, a warm-up, then calls until 3 calls and 0.3 s; ours `attnforge bench --chosen-only --min-seconds 0.3 --input ...`), its
median; reported: the median of the batch medians. FlexAttention compiles in its first call, made before timing
(reported as compile s). Each round starts with `attnforge bench` measuring the FMA peak; a round whose peak is below
85% of the best seen for its thread count is taken again (at most 3 times per cell). Every output, ours included, is
checked first against flex_peers.reference (float64 NumPy) over the rows with an allowed key
(docs/contract.md §5: max|impl − ref| ≤ 1e-4·(1 + max|ref|))."""


def flex_grid(quick, only_lengths=None):
    """(variant, B, L, documents, sweep, prefix) cells: every variant of flex_peers at B = 1, H = 8 and each length
    (document_attention: 4 equal documents; prefix_lm_attention: prefix L/4), then at the largest length
    document_attention with the other numbers of documents of FLEX_DOCUMENTS and prefix_lm_attention with the other
    prefixes of FLEX_PREFIXES (sweep = True: the extra tables, left out of the main one)."""
    lengths = (256,) if quick else (512, 2048, 8192)
    lengths = tuple(L for L in lengths if not only_lengths or L in only_lengths)
    cells = [(v, 1, L, 4 if v == "document_attention" else None, False, L // 4 if v == "prefix_lm_attention" else None)
             for v in flex_peers.VARIANTS for L in lengths]
    L = lengths[-1]
    return (cells + [("document_attention", 1, L, n, True, None) for n in FLEX_DOCUMENTS if n != 4]
            + [("prefix_lm_attention", 1, L, None, True, int(f * L)) for f in FLEX_PREFIXES if f != 1 / 4])


def flex_shape(variant, inputs, documents):
    B, H_, L = flex_peers.sizes(variant, inputs)
    if variant == "mha_causal_padding":
        valid = int((~inputs["key_padding_mask"][0]).sum())
        return f"B={B} L={L} D={D} unpadded={valid}"  # keys [unpadded, L) padded (batch entry 0; B = 1 here)
    shape = f"B={B} H={H_} L={L}"
    if variant == "document_attention":
        shape += f" docs={documents}"
    if variant == "prefix_lm_attention":
        shape += f" prefix={int(inputs['prefix_length'][0])}"
    return shape


def run_flex(exe, ours, fpeers, cells, threads, rounds, rng, rows, checks, best_peak, in_process=None):
    """The flex cells (bench/flex_peers.py): per cell the inputs saved as .npy and given to attnforge (`run` for the
    check, `bench --input` for the time); every output checked against flex_peers.reference over the rows with an
    allowed key (at the first thread count, right after prepare; FlexAttention compiles there, per thread count),
    then timed round-robin as the other cells. Rows gain live_fraction (64 x 64 blocks with any allowed pair),
    documents and sweep; FlexAttention's rows compile_s, fallback and block_mask_density (its 128 x 128 blocks)."""
    started = time.time()
    for n, (variant, B, L, documents, sweep, prefix) in enumerate(cells):
        inputs = flex_peers.make_inputs(variant, B, L, rng, heads=H, documents=documents or 4,
                                        prefix_length=None if prefix is None else [prefix] * B)
        shape = flex_shape(variant, inputs, documents)
        reference = flex_peers.reference(variant, inputs)
        has_key = flex_peers.rows_with_key(variant, inputs)
        live = flex_peers.live_fraction(variant, inputs)
        extra = {"live_fraction": live, "documents": documents, "sweep": sweep}
        ok, errors = {}, {}
        with tempfile.TemporaryDirectory() as tmp:
            given = save_inputs(inputs, tmp)
            try:
                c = flex_peers.check(our_output(exe, variant, inputs, tmp, given), reference, has_key)
            except (subprocess.CalledProcessError, OSError, ValueError) as e:
                note = (getattr(e, "stderr", None) or str(e)).strip()[:300]
                c = {"max_abs_error": None, "bound": None, "ok": False, "note": note}
                print(f"[flex] attnforge run {variant} failed: {note}", file=sys.stderr)
            checks.append({"variant": variant, "shape": shape, "implementation": "attnforge", **c})
            ok["attnforge"], errors["attnforge"] = c["ok"], c["max_abs_error"]
            python = in_process if in_process and not sweep else None  # the sweeps time FlexAttention alone
            if python:
                c = flex_peers.check(python.prepare(variant, inputs, 1)(), reference, has_key)
                checks.append({"variant": variant, "shape": shape, "implementation": OURS_PYTHON, **c})
                ok[OURS_PYTHON], errors[OURS_PYTHON] = c["ok"], c["max_abs_error"]
            sizes = ["--length", str(L)] + (["--heads", str(H)] if flex_peers.VARIANTS[variant][0] is None else [])
            for ti, t in enumerate(threads):
                calls, info = ({OURS_PYTHON: python.prepare(variant, inputs, t)} if python else {}), {}
                for p in (p for p in fpeers if not sweep or isinstance(p, flex_peers.Flex)):
                    name = p.name(variant)
                    try:
                        f = p.prepare(variant, inputs, t)
                    except flex_peers.Unsupported as e:
                        if ti == 0:
                            print(f"[flex] {name} left out of {variant} {shape}: {e}", file=sys.stderr)
                        continue
                    info[name] = getattr(f, "info", {})
                    if info[name].get("fallback"):
                        print(f"[flex] {name} {variant} {shape} threads={t} FELL BACK TO EAGER: "
                              f"{info[name]['fallback']}", file=sys.stderr)
                    if ti == 0:
                        c = flex_peers.check(flex_peers.to_numpy(f()), reference, has_key)
                        checks.append({"variant": variant, "shape": shape, "implementation": name, **c})
                        ok[name], errors[name] = c["ok"], c["max_abs_error"]
                    calls[name] = f
                try:
                    samples, peak, retakes, ours_rows = measure_rounds(
                        lambda: ours.batch(variant, B, None, t, sizes + given, min_seconds=FLEX_MIN_SECONDS),
                        calls, rounds, t, best_peak, min_seconds=FLEX_MIN_SECONDS)
                except (subprocess.CalledProcessError, ValueError, KeyError) as e:
                    print(f"[flex] attnforge bench {variant} {shape} failed "
                          f"({(getattr(e, 'stderr', None) or str(e)).strip()[:300]}); cell left out", file=sys.stderr)
                    continue
                finally:
                    del calls
                flops = ours_rows[-1]["gflops"] * ours_rows[-1]["ms"] * 1e6
                for impl, ms in samples.items():
                    m = statistics.median(ms)
                    fi = info.get(impl, {})
                    rows.append({"variant": variant, "shape": shape, "threads": t, "implementation": impl, "ms": m,
                                 "gflops": flops / m / 1e6, "peak_gflops": statistics.median(peak),
                                 "fraction_of_peak": flops / m / 1e6 / statistics.median(peak),
                                 "check_ok": ok.get(impl), "max_abs_error": errors.get(impl), "samples_ms": ms,
                                 "retaken_rounds": retakes, **extra,
                                 **{k: fi[k] for k in ("compile_s", "fallback", "block_mask_density") if k in fi}})
                print(f"[flex {n + 1}/{len(cells)} {time.time() - started:5.0f} s] {variant} {shape} threads={t}: "
                      + ", ".join(f"{r['implementation']} {r['ms']:.2f} ms"
                                  + (f" (compile {r['compile_s']:.1f} s)" if "compile_s" in r else "")
                                  for r in rows[-len(samples):]), flush=True)
        flex_peers.release()


def bf16_grid(quick):
    """(variant, B, L) cells of the bf16 grid: dense sdpa, mha and self_attention_layer at L >= 512."""
    if quick:
        return [("sdpa", 1, 256), ("mha", 1, 256), ("self_attention_layer", 1, 256)]
    return ([("sdpa", 1, L) for L in (512, 2048, 8192)] + [("mha", B, L) for B in (1, 4) for L in (512, 2048)]
            + [("self_attention_layer", B, L) for B, L in ((1, 512), (1, 2048), (4, 2048))])


BF16_PROTOCOL = """the prefill protocol (round-robin, `--rounds` rounds, medians of batch medians, rounds retaken when the
FMA peak is below 85% of the best seen), with two attnforge rows per round: the bf16 kernel the rule picks
(`attnforge bench --dtype bf16`, which also measures the machine's bf16 peak that its % of peak is of: AMX's
tdpbf16ps where the CPU has AMX, else vdpbf16ps where it beats the FMA peak, else the FMA peak) and the float32 one. Inputs are float32 values rounded to bf16 once, the same numbers for every implementation;
every output, ours included, is checked first against float64 NumPy on those inputs (docs/contract.md §5's bf16
bound, 5e-3 · (1 + max|ref|), plus for mha and self_attention_layer, whose projected Q, K, V every 16-bit
implementation rounds, §5's term for rounded operands, V·(e^(4·u·S) − 1) + 2·u·V)."""


def run_bf16(exe, ours, bpeers, cells, threads, rounds, rng, rows, checks, best_peak, in_process=None):
    """The bf16 cells (bench/bf16_peers.py). Rows: 'attnforge' (bf16), 'attnforge float32', 'attnforge (Python)'
    (the bf16 kernel through the module: float32 arrays rounded to bf16 as it reads them) and the peers, each with
    gflops and the fraction of the bf16 peak (peak_gflops: AMX tiles, else vdpbf16ps, else FMAs) and of the FMA peak
    (fma_peak_gflops)."""
    import bf16_peers
    started = time.time()
    for n, (variant, B, L) in enumerate(cells):
        shape = f"B={B} L={L}" + (f" H={H} E={E}" if variant == "sdpa" else f" D={D}")
        inputs = {k: bf16_peers.round_to_bf16(v) for k, v in make_inputs(variant, B, L, rng).items()}
        reference = bf16_peers.reference(variant, inputs)
        ok = {}
        # §5: the factor of the type, plus for mha and the layer, whose projected Q, K, V the 16-bit implementations
        # round (ours and the peers alike), the term for rounded operands.
        # Our fp16 kernels convert to float32 and round nothing they compute: no term for them.
        term = bf16_peers.rounded_operands_terms(variant, inputs)

        def check(got, impl):
            dtype = bf16_peers.dtype_of(impl)
            rounds = dtype == "bf16" or (dtype == "fp16" and not impl.startswith("attnforge"))
            return bf16_peers.check(got, reference, 2e-3 if dtype == "fp16" else 5e-3,
                                    term[dtype] if rounds else 0.0)
        fp16 = variant in ("sdpa", "mha")  # the variants with fp16 kernels (generated/kernels.list)
        ours_types = (("attnforge", "bf16"), ("attnforge float32", None)) + ((("attnforge fp16", "fp16"),) if fp16 else ())
        for impl, dtype in ours_types:
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    c = check(our_output(exe, variant, inputs, tmp, dtype=dtype), impl)
            except (subprocess.CalledProcessError, OSError, ValueError) as e:
                c = {"max_abs_error": None, "bound": None, "ok": False,
                     "note": (getattr(e, "stderr", None) or str(e)).strip()[:300]}
            checks.append({"variant": variant, "shape": shape, "implementation": impl, "grid": "bf16", **c})
            ok[impl] = c["ok"]
        if in_process:
            c = check(in_process.prepare(variant, inputs, 1, dtype="bf16")(), OURS_PYTHON)
            checks.append({"variant": variant, "shape": shape, "implementation": OURS_PYTHON, "grid": "bf16", **c})
            ok[OURS_PYTHON] = c["ok"]
        usable = []
        for p in bpeers:
            try:
                c = check(bf16_peers.run_once(p, p.prepare(variant, inputs, 1)), p.name(variant))
            except Exception as e:  # a peer that cannot build this model is reported, not fatal
                print(f"[bf16] {p.name(variant)} left out of {variant} {shape}: {str(e)[:300]}", file=sys.stderr)
                continue
            checks.append({"variant": variant, "shape": shape, "implementation": p.name(variant), "grid": "bf16", **c})
            ok[p.name(variant)] = c["ok"]
            usable.append(p)
        for t in threads:
            calls = {OURS_PYTHON: in_process.prepare(variant, inputs, t, dtype="bf16")} if in_process else {}
            for p in usable:
                f = p.prepare(variant, inputs, t)
                calls[p.name(variant)] = (lambda p=p, f=f: p.run(f)) if hasattr(p, "run") else f
            samples, peak, retakes, ours_rows = measure_rounds(
                lambda: ours.batch(variant, B, L, t, dtype="bf16"), calls, rounds, t, best_peak,
                more_ours={"attnforge float32": lambda: ours.batch(variant, B, L, t),
                           **({"attnforge fp16": lambda: ours.batch(variant, B, L, t, dtype="fp16")} if fp16 else {})})
            flops = ours_rows[-1]["gflops"] * ours_rows[-1]["ms"] * 1e6
            fma = statistics.median(r.get("fma_peak_gflops", r["peak_gflops"]) for r in ours_rows)
            for impl, ms in samples.items():
                m = statistics.median(ms)
                rows.append({"variant": variant, "shape": shape, "threads": t, "implementation": impl, "ms": m,
                             "grid": "bf16", "dtype": bf16_peers.dtype_of(impl),
                             "gflops": flops / m / 1e6, "peak_gflops": statistics.median(peak),
                             "fraction_of_peak": flops / m / 1e6 / statistics.median(peak),
                             "fma_peak_gflops": fma, "fraction_of_fma_peak": flops / m / 1e6 / fma,
                             "check_ok": ok.get(impl), "samples_ms": ms, "retaken_rounds": retakes})
            print(f"[bf16 {n + 1}/{len(cells)} {time.time() - started:5.0f} s] {variant} {shape} threads={t}: "
                  + ", ".join(f"{r['implementation']} {r['ms']:.2f} ms" for r in rows[-len(samples):]), flush=True)


def make_inputs(variant, B, L, rng):
    if variant.startswith("sdpa"):
        return {n: rng.standard_normal((B, H, L, E), dtype=np.float32) for n in ("q", "k", "v")}
    kv = 128 if variant == "gqa" else D
    w = lambda o: (rng.standard_normal((D, o), dtype=np.float32) / np.sqrt(D)).astype(np.float32)
    inputs = {"x": rng.standard_normal((B, L, D), dtype=np.float32), "wq": w(D), "wk": w(kv), "wv": w(kv), "wo": w(D)}
    if variant == "self_attention_layer":  # LayerNorm's gamma and beta (D)
        inputs.update(gamma=(1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
                      beta=(0.1 * rng.standard_normal(D)).astype(np.float32))
    return inputs


class Ours:
    """`attnforge bench --json` in a subprocess: one batch per call, the FMA peak measured with it."""

    def __init__(self, exe, strategy=None):
        self.exe, self.strategy = exe, strategy

    def batch(self, variant, B, L, threads, sizes=None, min_seconds=0.5, dtype=None):
        """sizes: the shape options instead of --length L (and --heads for sdpa), e.g. ["--lq", "1", "--lk", "4096"]
        (any other options too, e.g. --input NAME=FILE.npy); dtype: the kernels' storage type (--dtype)."""
        args = [self.exe, "bench", variant, "--batch", str(B), "--threads", str(threads),
                "--no-interpreter", "--json", "--repeats", "3", "--min-seconds", str(min_seconds)]
        args += ["--dtype", dtype] if dtype else []
        if sizes is not None:
            args += sizes
        else:
            args += ["--length", str(L)] + (["--heads", str(H)] if variant.startswith("sdpa") else [])
        args += ["--strategy", self.strategy] if self.strategy else ["--chosen-only"]
        r = subprocess.run(args, capture_output=True, text=True, check=True)
        rows = json.loads(r.stdout[r.stdout.index("\n[") + 1:])
        if len(rows) != 1:
            raise RuntimeError(f"expected one kernel row from {' '.join(args)}, got {len(rows)}")
        return rows[0]


def listed_variants(exe, grid="decode"):
    """The variants `attnforge list --json` names (empty, with a message, if it cannot say)."""
    try:
        r = subprocess.run([exe, "list", "--json"], capture_output=True, text=True, check=True)
        return {v["variant"] for v in json.loads(r.stdout)}
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError, TypeError) as e:
        print(f"[{grid}] `attnforge list --json` failed ({e}); {grid} cells left out", file=sys.stderr)
        return set()


def bench_takes_inputs(exe):
    """Whether `attnforge bench` accepts --input NAME=FILE.npy (inputs given instead of synthetic ones)."""
    try:
        r = subprocess.run([exe, "bench", "--help"], capture_output=True, text=True)
    except OSError:
        return False
    return "--input" in r.stdout


def measure_rounds(ours_batch, calls, rounds, t, best_peak, adams_batch=None, min_seconds=0.5, more_ours=None):
    """One cell at one thread count: `rounds` kept rounds, round-robin. ours_batch() runs `attnforge bench`
    (one row); calls: {implementation: zero-argument callable, optionally with a .before run untimed};
    more_ours: {implementation: another `attnforge bench` batch (one row)}, run every round after ours_batch.
    Returns ({implementation: [ms per round]}, [FMA peak per kept round], retaken rounds, [our rows])."""
    more_ours = more_ours or {}
    samples = {"attnforge": [], **({"Halide Adams2019": []} if adams_batch else {}), **{n: [] for n in more_ours},
               **{n: [] for n in calls}}
    peak, retakes, kept, ours_rows = [], 0, 0, []
    while kept < rounds:
        settle()  # the last peer's threads may still spin (bench/timing.py)
        row = ours_batch()
        best_peak[t] = max(best_peak.get(t, 0.0), row["peak_gflops"])
        if row["peak_gflops"] < 0.85 * best_peak[t] and retakes < 3:
            retakes += 1  # the machine was busy with something else: take the round again
            continue
        kept += 1
        samples["attnforge"].append(row["ms"])
        peak.append(row["peak_gflops"])
        ours_rows.append(row)
        if kept == 1 and adams_batch:
            samples["Halide Adams2019"].append(adams_batch()["ms"])
        for name, batch in more_ours.items():
            samples[name].append(batch()["ms"])
        for name, f in calls.items():
            samples[name].append(time_batch(f, min_seconds=min_seconds, before=getattr(f, "before", None)) * 1e3)
    return samples, peak, retakes, ours_rows


def check(name, got, ours):
    err = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - ours)))
    bound = 1e-4 * (1 + float(np.max(np.abs(ours))))
    return {"max_abs_error": err, "bound": bound, "ok": err <= bound}


def save_inputs(inputs, tmp):
    """Every input as tmp/NAME.npy (docs/contract.md §4: float32 <f4, int32 <i4, bool |b1); the --input options."""
    args = []
    for name, a in inputs.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, a)
        args += ["--input", f"{name}={path}"]
    return args


def our_output(exe, variant, inputs, tmp, given=None, dtype=None):
    """`attnforge run` on the inputs (given: the --input options of inputs already saved under tmp); float64."""
    args = [exe, "run", variant, "--output", os.path.join(tmp, "ours.npy")] + (["--dtype", dtype] if dtype else [])
    args += given if given is not None else save_inputs(inputs, tmp)
    subprocess.run(args, capture_output=True, text=True, check=True)
    return np.load(os.path.join(tmp, "ours.npy")).astype(np.float64)


def peak_memory(exe):
    """Peak resident memory of `attnforge bench sdpa` at B=1, H=8, L=16384 (the rule's kernel, 2 threads),
    against the size of its inputs and output. Measured before PyTorch and ONNX Runtime are loaded: Linux
    counts in a child's ru_maxrss the resident size of the parent it was forked from (until exec), so a
    large parent would hide the child's own peak."""
    args = [exe, "bench", "sdpa", "--length", "16384", "--heads", str(H), "--threads", "2", "--chosen-only",
            "--no-interpreter", "--repeats", "1", "--min-seconds", "0"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, _, usage = os.wait4(p.pid, 0)
    tensors = 4 * H * 16384 * E * 4  # q, k, v and the output, float32
    return {"command": " ".join(args[1:]), "peak_rss_mib": usage.ru_maxrss / 1024, "tensors_mib": tensors / 2**20,
            "extra_mib": usage.ru_maxrss / 1024 - tensors / 2**20}


def run_decode(exe, ours, dpeers, cells, threads, rounds, rng, rows, checks, best_peak, in_process=None):
    """The decode cells: outputs (ours included) checked against decode_peers.decode_reference, then timed
    round-robin as the other cells; rows gain kv_bytes, gbs and, when attnforge reports one, the measured read
    bandwidth (read_bandwidth_gbs) and the fraction of it."""
    started = time.time()
    for n, (variant, B, Lq, Lk) in enumerate(cells):
        shape, kv_bytes = decode_shape(variant, B, Lq, Lk), decode_kv_bytes(variant, B, Lk)
        inputs = make_decode_inputs(variant, B, Lq, Lk, rng)
        reference = decode_peers.decode_reference(**inputs)
        ok = {}
        try:
            with tempfile.TemporaryDirectory() as tmp:
                c = check("attnforge", our_output(exe, variant, inputs, tmp), reference)
        except (subprocess.CalledProcessError, OSError, ValueError) as e:
            note = (getattr(e, "stderr", None) or str(e)).strip()[:300]
            c = {"max_abs_error": None, "bound": None, "ok": False, "note": note}
            print(f"[decode] attnforge run {variant} failed: {c['note']}", file=sys.stderr)
        checks.append({"variant": variant, "shape": shape, "implementation": "attnforge", **c})
        ok["attnforge"] = c["ok"]
        if in_process:
            c = check(OURS_PYTHON, in_process.prepare(variant, inputs, 1)(), reference)
            checks.append({"variant": variant, "shape": shape, "implementation": OURS_PYTHON, **c})
            ok[OURS_PYTHON] = c["ok"]
        usable = []
        for p in dpeers:
            name = p.name(variant)
            try:
                f = p.prepare(variant, inputs, 1)
            except decode_peers.Unsupported as e:
                print(f"[decode] {name} left out of {variant} {shape}: {e}", file=sys.stderr)
                continue
            c = check(name, decode_peers.run_once(f), reference)
            del f
            checks.append({"variant": variant, "shape": shape, "implementation": name, **c})
            ok[name] = c["ok"]
            usable.append(p)
        for t in threads:
            calls = {OURS_PYTHON: in_process.prepare(variant, inputs, t)} if in_process else {}
            calls.update({p.name(variant): p.prepare(variant, inputs, t) for p in usable})
            sizes = ["--lq", str(Lq), "--lk", str(Lk)]
            sizes += ["--heads", str(DECODE_HEADS[variant][0])] if variant == "decode" else []
            try:
                samples, peak, retakes, ours_rows = measure_rounds(
                    lambda: ours.batch(variant, B, None, t, sizes), calls, rounds, t, best_peak)
            except (subprocess.CalledProcessError, ValueError, KeyError) as e:
                print(f"[decode] attnforge bench {variant} {' '.join(sizes)} failed ({e}); cell left out",
                      file=sys.stderr)
                continue
            finally:
                del calls
            flops = ours_rows[-1]["gflops"] * ours_rows[-1]["ms"] * 1e6
            bw = [r["read_bandwidth_gbs"] for r in ours_rows if r.get("read_bandwidth_gbs")]
            bandwidth = statistics.median(bw) if bw else None
            # How much of attnforge's process lay in transparent huge pages (its cache's GB/s depends on it).
            huge = [r["huge_page_bytes"] for r in ours_rows if r.get("huge_page_bytes") is not None]
            # Ours against the bandwidth probed between its own calls, round by round (the same moments: the memory
            # of a shared machine is not always as fast); a peer, timed at other moments, against their median.
            ours_fraction = statistics.median(kv_bytes / (r["ms"] * 1e6) / r["read_bandwidth_gbs"]
                                              for r in ours_rows) if len(bw) == len(ours_rows) else None
            for impl, ms in samples.items():
                m = statistics.median(ms)
                gbs = kv_bytes / m / 1e6
                fraction = ours_fraction if impl == "attnforge" and ours_fraction else (
                    gbs / bandwidth if bandwidth else None)
                rows.append({"variant": variant, "shape": shape, "threads": t, "implementation": impl, "ms": m,
                             "gflops": flops / m / 1e6, "peak_gflops": statistics.median(peak),
                             "fraction_of_peak": flops / m / 1e6 / statistics.median(peak), "check_ok": ok.get(impl),
                             "samples_ms": ms, "retaken_rounds": retakes, "kv_bytes": kv_bytes, "gbs": gbs,
                             "read_bandwidth_gbs": bandwidth,
                             "fraction_of_read_bandwidth": fraction,
                             "attnforge_huge_page_bytes": min(huge) if huge else None})
            print(f"[decode {n + 1}/{len(cells)} {time.time() - started:5.0f} s] {variant} {shape} threads={t}: "
                  + ", ".join(f"{r['implementation']} {r['ms']:.3f} ms {r['gbs']:.1f} GB/s"
                              for r in rows[-len(samples):]),
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnforge", required=True, help="the attnforge executable (a build with the baselines)")
    ap.add_argument("--out", default="bench/results", help="folder for results.json and results.md")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--variants", default="", help="comma-separated subset of the grid's variants")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a tiny grid, one thread, one round (a smoke test)")
    ap.add_argument("--lengths", default="", help="prefill and flex grids: comma-separated subset of their lengths")
    ap.add_argument("--flex", action="store_true",
                    help="the flex grid (bench/flex_peers.py: FlexAttention, SDPA and OpenVINO with dense masks) "
                         "instead of the prefill and decode grids; --variants picks among its variants")
    ap.add_argument("--bf16", action="store_true",
                    help="the bf16 grid (bench/bf16_peers.py: dense sdpa and mha, attnforge bf16 and float32 against "
                         "OpenVINO f32/bf16 and PyTorch bf16) instead of the other grids")
    ap.add_argument("--no-adams2019", action="store_true",
                    help="leave out the Adams2019 baseline (for a build without -DATTNFORGE_AUTOSCHEDULED_BASELINES)")
    a = ap.parse_args()
    threads = [1] if a.quick else [int(t) for t in a.threads.split(",")]
    rounds = 1 if a.quick else a.rounds
    other = a.flex or a.bf16  # a grid of its own instead of the prefill and decode grids
    lengths = [int(x) for x in a.lengths.split(",")] if a.lengths else None
    shapes = [] if other else [s for s in grid(a.quick) if (not a.variants or s[0] in a.variants.split(","))
                               and (not lengths or s[2] in lengths)]
    memory = None if a.quick or other else peak_memory(a.attnforge)
    peers = [] if other else [peer_modules.Torch(), peer_modules.OnnxRuntime()]
    ours, adams = Ours(a.attnforge), None if a.no_adams2019 else Ours(a.attnforge, "adams2019")
    try:
        in_process = OursPython(a.attnforge)  # ours timed the way the peers are (bench/ours_python.py)
    except ImportError as e:
        in_process = None
        print(f"[bench] {e}: the '{OURS_PYTHON}' rows are left out", file=sys.stderr)
    rng = np.random.default_rng(0)
    rows, checks, best_peak = [], [], {}
    started = time.time()
    for n, (variant, B, L) in enumerate(shapes):
        shape = f"B={B} L={L}" + (f" H={H} E={E}" if variant.startswith("sdpa") else f" D={D}")
        inputs = make_inputs(variant, B, L, rng)
        with tempfile.TemporaryDirectory() as tmp:
            reference = our_output(a.attnforge, variant, inputs, tmp)
        prepared = {}
        for p in peers:
            f = p.prepare(variant, inputs, 1)
            if f is None:
                continue
            c = check(p.name(variant), p.run(f), reference)
            checks.append({"variant": variant, "shape": shape, "implementation": p.name(variant), **c})
            prepared[p] = c
        if in_process:
            c = check(OURS_PYTHON, in_process.prepare(variant, inputs, 1)(), reference)
            checks.append({"variant": variant, "shape": shape, "implementation": OURS_PYTHON, **c})
        for t in threads:
            calls = {OURS_PYTHON: in_process.prepare(variant, inputs, t)} if in_process else {}
            for p in prepared:
                f = p.prepare(variant, inputs, t)
                calls[p.name(variant)] = lambda p=p, f=f: p.run(f)
            samples, peak, retakes, ours_rows = measure_rounds(
                lambda: ours.batch(variant, B, L, t), calls, rounds, t, best_peak,
                (lambda: adams.batch(variant, B, L, t)) if adams else None)
            flops = ours_rows[-1]["gflops"] * ours_rows[-1]["ms"] * 1e6
            for impl, ms in samples.items():
                m = statistics.median(ms)
                check_ok = next((c["ok"] for c in checks if c["variant"] == variant and c["shape"] == shape
                                 and c["implementation"] == impl), None)
                rows.append({"variant": variant, "shape": shape, "threads": t, "implementation": impl, "ms": m,
                             "gflops": flops / m / 1e6, "peak_gflops": statistics.median(peak),
                             "fraction_of_peak": flops / m / 1e6 / statistics.median(peak), "check_ok": check_ok,
                             "samples_ms": ms, "retaken_rounds": retakes})
            print(f"[{n + 1}/{len(shapes)} {time.time() - started:5.0f} s] {variant} {shape} threads={t}: "
                  + ", ".join(f"{r['implementation']} {r['ms']:.2f} ms" for r in rows[-len(samples):]), flush=True)
    versions = {"PyTorch": peers[0].version, "ONNX Runtime": peers[1].version} if peers else {}
    cells = [] if other else [c for c in decode_grid(a.quick) if not a.variants or c[0] in a.variants.split(",")]
    if cells:
        listed = listed_variants(a.attnforge)
        for v in sorted({c[0] for c in cells} - listed):
            print(f"[decode] attnforge does not list the variant {v} (attnforge list --json): its cells are left out",
                  file=sys.stderr)
        cells = [c for c in cells if c[0] in listed]
    if cells:
        dpeers = decode_peers.peers()
        versions.update({"OpenVINO": p.version for p in dpeers if isinstance(p, decode_peers.OpenVino)})
        run_decode(a.attnforge, ours, dpeers, cells, threads, rounds, rng, rows, checks, best_peak, in_process)
    flex = [c for c in flex_grid(a.quick, [int(x) for x in a.lengths.split(",")] if a.lengths else None) if not a.variants or c[0] in a.variants.split(",")] if a.flex else []
    if flex:
        listed = listed_variants(a.attnforge, "flex")
        for v in sorted({c[0] for c in flex} - listed):
            print(f"[flex] attnforge does not list the variant {v} (attnforge list --json): its cells are left out",
                  file=sys.stderr)
        flex = [c for c in flex if c[0] in listed]
    if flex and not bench_takes_inputs(a.attnforge):
        sys.exit(f"[flex] `{a.attnforge} bench` does not accept --input NAME=FILE.npy: the flex grid needs it so that "
                 "attnforge is timed on the same document ids, prefix lengths and padding as the peers")
    if flex:
        fpeers = flex_peers.peers()
        versions.update({"PyTorch": p.version for p in fpeers if isinstance(p, flex_peers.TorchSdpa)})
        versions.update({"OpenVINO": p.version for p in fpeers if isinstance(p, flex_peers.OpenVino)})
        run_flex(a.attnforge, ours, fpeers, flex, threads, rounds, rng, rows, checks, best_peak, in_process)
    bf16 = [c for c in bf16_grid(a.quick) if not a.variants or c[0] in a.variants.split(",")] if a.bf16 else []
    if bf16:
        import bf16_peers
        bpeers = bf16_peers.peers()
        versions.update({"OpenVINO": p.version for p in bpeers if isinstance(p, bf16_peers.OpenVino)})
        versions.update({"PyTorch": p.version for p in bpeers if isinstance(p, bf16_peers.TorchBf16)})
        # its own best peaks: a bf16 row's peak is the machine's bf16 peak (AMX tiles, else vdpbf16ps where it beats the FMA peak, else the FMA peak)
        run_bf16(a.attnforge, ours, bpeers, bf16, threads, rounds, rng, rows, checks, {}, in_process)
    protocol = FLEX_PROTOCOL if a.flex else BF16_PROTOCOL if a.bf16 else __doc__.split("Protocol: ")[1].split("\n\n")[0]
    result = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "machine": {"cpu": report.cpu_model(), "cores": os.cpu_count(), "platform": platform.platform()},
        "versions": {**versions, "Halide": report.halide_version(), "NumPy": np.__version__},
        "protocol": protocol.replace("\n", " "),
        "rounds": rounds, "rows": rows, "checks": checks,
        "memory": memory,
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    md = report.markdown(result)
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
