"""The benchmark's tables (Markdown) and summary: ratios to the best peer and the issue's targets."""
import math
import statistics

OURS = "attnforge"
OURS_PYTHON = "attnforge (Python)"  # the same kernels through the Python module, timed as the peers are


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


def halide_version():
    try:
        from importlib.metadata import version
        return version("halide")
    except Exception:  # the package metadata is optional; the table says unknown
        return "unknown"


def is_decode(variant):
    """Decode cells (bench/decode_peers.py) are reported apart: in GB/s of K+V cache read, not against the FMA peak."""
    return variant.startswith("decode")


# The variants of the flex grid (bench/flex_peers.py VARIANTS), reported apart: masks and score modifiers against
# FlexAttention and dense-mask SDPA peers.
FLEX_VARIANTS = {"sliding_window_attention", "prefix_lm_attention", "document_attention", "alibi_attention",
                 "softcap_attention", "relative_position_attention", "mha_causal_padding"}


def is_flex(variant):
    return variant in FLEX_VARIANTS


def is_prefill(variant):
    """The prefill grid of the issue's targets: neither decode nor flex cells."""
    return not is_decode(variant) and not is_flex(variant)


def cells(rows):
    """{(variant, shape, threads): {implementation: row}}"""
    out = {}
    for r in rows:
        out.setdefault((r["variant"], r["shape"], r["threads"]), {})[r["implementation"]] = r
    return out


def best_peer_ms(impls):
    """The fastest peer's time in a cell, over peers whose output checked ok (None: no such peer)."""
    return min((r["ms"] for name, r in impls.items() if not name.startswith(OURS) and r["check_ok"] is not False),
               default=None)


def speedups(rows):
    """Per cell: best peer time / our time (> 1: we are faster)."""
    s = {}
    for key, impls in cells(rows).items():
        best = best_peer_ms(impls)
        if OURS in impls and best is not None:
            s[key] = best / impls[OURS]["ms"]
    return s


def _dims(shape):
    """'B=1 L=2048 D=512' -> {'B': 1, 'L': 2048, 'D': 512}"""
    return {k: int(v) for k, v in (part.split("=") for part in shape.split())}


def necessary_flops(variant, shape, dense_flops):
    """The flops a cell cannot avoid: the dense count, less, under a causal mask, the score and P·V products
    above the diagonal (L(L+1)/2 of the L² (query, key) pairs remain; projections stay whole)."""
    if not variant.endswith("_causal"):
        return dense_flops
    d = _dims(shape)
    L = d["L"]
    attention = dense_flops if variant.startswith("sdpa") else 4 * d["B"] * L * L * d["D"]
    return dense_flops - attention * (L - 1) / (2 * L)


def speed_of_light(rows):
    """Per cell: the best peer's time over the time of the cell's necessary flops at 100% of the FMA peak
    measured in the same run: the largest "best peer ÷ ours" any fp32 implementation could reach here
    (docs/contract.md §5's 1e-4 bound rules out bf16 products, which would double the peak)."""
    bound = {}
    for key, impls in cells(rows).items():
        best = best_peer_ms(impls)
        if OURS not in impls or best is None:
            continue
        r = impls[OURS]
        dense = r["gflops"] * r["ms"] * 1e6
        ideal_ms = necessary_flops(key[0], key[1], dense) / (r["peak_gflops"] * 1e6)
        bound[key] = best / ideal_ms
    return bound


def geometric_mean(values):
    return math.exp(statistics.fmean(math.log(v) for v in values))


def targets(rows, memory):
    rows = [r for r in rows if is_prefill(r["variant"])]  # the targets are those of the prefill grid
    c, s = cells(rows), speedups(rows)
    ours = {k: v[OURS] for k, v in c.items() if OURS in v}
    L = lambda shape: _dims(shape)["L"]
    checks = []
    for k, r in ours.items():
        if k[0] == "sdpa" and L(k[1]) >= 512:
            checks.append((f"sdpa {k[1]} {k[2]} thr ≥ 75% of peak", r["fraction_of_peak"] >= 0.75, f"{100 * r['fraction_of_peak']:.1f}%"))
        if k[0] == "mha" and L(k[1]) >= 512:
            checks.append((f"mha {k[1]} {k[2]} thr ≥ 70% of peak", r["fraction_of_peak"] >= 0.70, f"{100 * r['fraction_of_peak']:.1f}%"))
        twin = (k[0].replace("_causal", ""), k[1], k[2])
        if k[0].endswith("_causal") and L(k[1]) >= 1024 and twin in ours:
            ratio = r["ms"] / ours[twin]["ms"]
            checks.append((f"{k[0]} {k[1]} {k[2]} thr ≤ 0.6× {twin[0]}", ratio <= 0.6, f"{ratio:.2f}×"))
        if k[2] == 2 and L(k[1]) >= 512 and (k[0], k[1], 1) in ours:
            scale = ours[(k[0], k[1], 1)]["ms"] / r["ms"]
            checks.append((f"{k[0]} {k[1]} 2 threads ≥ 1.8× 1 thread", scale >= 1.8, f"{scale:.2f}×"))
    if s:
        slowest = min(s, key=s.get)
        checks.append(("faster than every peer on every cell", all(v > 1 for v in s.values()),
                       f"lowest {s[slowest]:.2f}× ({slowest[0]} {slowest[1]} {slowest[2]} thr)"))
        gm, limit = geometric_mean(s.values()), geometric_mean(speed_of_light(rows).values())
        checks.append(("geometric-mean speedup over the best peer ≥ 1.5×", gm >= 1.5,
                       f"{gm:.2f}× (at 100% of the FMA peak on every cell: at most {limit:.2f}×)"))
    if memory:
        checks.append(("sdpa L=16384 peak memory ≤ inputs + outputs + 64 MiB", memory["extra_mib"] <= 64,
                       f"{memory['peak_rss_mib']:.0f} MiB peak, {memory['tensors_mib']:.0f} MiB tensors, "
                       f"{memory['extra_mib']:.0f} MiB extra"))
    return checks


PEER_COLUMNS = ("PyTorch", "ONNX Runtime", "Halide Adams2019")  # by name prefix: each has per-variant names


def summary(rows):
    """One line per cell: ours (ms, GFLOP/s, % of peak), each peer's ms, best peer ÷ ours."""
    rows = [r for r in rows if is_prefill(r["variant"])]
    s = speedups(rows)
    out = ["| variant | shape | threads | attnforge ms | GFLOP/s | % of FMA peak | "
           + " | ".join(f"{p} ms" for p in PEER_COLUMNS) + " | best peer ÷ ours |",
           "| --- | --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in PEER_COLUMNS) + " | ---: |"]
    for key, impls in cells(rows).items():
        if OURS not in impls:
            continue
        r = impls[OURS]
        peer_ms = []
        for prefix in PEER_COLUMNS:
            found = [v for name, v in impls.items() if name.startswith(prefix)]
            peer_ms.append("—" if not found else f"{found[0]['ms']:.2f}" + (" ✗" if found[0]["check_ok"] is False else ""))
        ratio = f"{s[key]:.2f}×" if key in s else "—"
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {r['ms']:.2f} | {r['gflops']:.1f} | {100 * r['fraction_of_peak']:.1f} | "
                   + " | ".join(peer_ms) + f" | {ratio} |")
    return "\n".join(out)


DECODE_PEER_COLUMNS = ("PyTorch", "ONNX Runtime", "OpenVINO")


def _percent(fraction):
    return "—" if fraction is None else f"{100 * fraction:.1f}"


def decode_summary(rows):
    """Decode cells, one line each: ours (ms, GB/s of K+V read, % of the measured read bandwidth when attnforge
    reports one), each peer's ms, the best peer's GB/s, best peer ÷ ours."""
    rows = [r for r in rows if is_decode(r["variant"])]
    s = speedups(rows)
    out = ["| variant | shape | threads | attnforge ms | GB/s | % of read bandwidth | "
           + " | ".join(f"{p} ms" for p in DECODE_PEER_COLUMNS) + " | best peer GB/s | best peer ÷ ours |",
           "| --- | --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in DECODE_PEER_COLUMNS) + " | ---: | ---: |"]
    for key, impls in cells(rows).items():
        if OURS not in impls:
            continue
        r = impls[OURS]
        peer_ms = []
        for prefix in DECODE_PEER_COLUMNS:
            found = [v for name, v in impls.items() if name.startswith(prefix)]
            peer_ms.append("—" if not found else f"{found[0]['ms']:.3f}" + (" ✗" if found[0]["check_ok"] is False else ""))
        best = best_peer_ms(impls)
        best_gbs = f"{r['kv_bytes'] / best / 1e6:.1f}" if best else "—"
        ratio = f"{s[key]:.2f}×" if key in s else "—"
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {r['ms']:.3f}{' ✗' if r['check_ok'] is False else ''} | "
                   f"{r['gbs']:.1f} | {_percent(r.get('fraction_of_read_bandwidth'))} | " + " | ".join(peer_ms)
                   + f" | {best_gbs} | {ratio} |")
    if s:
        out += ["", f"Decode: best peer ÷ ours, geometric mean over {len(s)} cells: {geometric_mean(s.values()):.2f}×; "
                f"lowest {min(s.values()):.2f}×. GB/s: the K and V cache bytes of the cell (float32) over the time."]
    return "\n".join(out)


FLEX_PEER_COLUMNS = ("FlexAttention", "PyTorch SDPA", "OpenVINO")


def _ms(row, digits=2):
    if row is None:
        return "—"
    flags = (" ✗" if row.get("check_ok") is False else "") + (" (eager fallback!)" if row.get("fallback") else "")
    return f"{row['ms']:.{digits}f}{flags}"


def _prefixed(impls, prefix):
    return next((v for name, v in impls.items() if name.startswith(prefix)), None)


def flex_summary(rows):
    """Flex cells (the document sweep left out), one line each: the live fraction of 64 x 64 blocks, ours, each peer's
    ms, FlexAttention's compile seconds (its first call), best peer ÷ ours."""
    rows = [r for r in rows if is_flex(r["variant"]) and not r.get("sweep")]
    s = speedups(rows)
    out = ["| variant | shape | threads | live blocks | attnforge ms | "
           + " | ".join(f"{p} ms" for p in FLEX_PEER_COLUMNS) + " | FlexAttention compile s | best peer ÷ ours |",
           "| --- | --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in FLEX_PEER_COLUMNS) + " | ---: | ---: |"]
    for key, impls in cells(rows).items():
        if OURS not in impls:
            continue
        r, flex = impls[OURS], _prefixed(impls, "FlexAttention")
        live = "—" if r.get("live_fraction") is None else f"{r['live_fraction']:.3f}"
        compile_s = f"{flex['compile_s']:.1f}" if flex and flex.get("compile_s") is not None else "—"
        ratio = f"{s[key]:.2f}×" if key in s else "—"
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {live} | {_ms(r)} | "
                   + " | ".join(_ms(_prefixed(impls, p)) for p in FLEX_PEER_COLUMNS) + f" | {compile_s} | {ratio} |")
    if s:
        out += ["", f"Flex: best peer ÷ ours, geometric mean over {len(s)} cells: {geometric_mean(s.values()):.2f}×; "
                f"lowest {min(s.values()):.2f}×. Live blocks: the fraction of 64 × 64 blocks of the (query, key) plane "
                "holding any pair that takes part (— : no mask). FlexAttention compile s: its first call (trace, "
                "Inductor, g++), not in its ms."]
    return "\n".join(out)


def flex_sweep(rows, variant, key_name, what, column):
    """`variant` at its sweep's length: ms against the shape's `key_name` (docs, prefix), and ms ÷ live fraction
    (constant when the time is proportional to the live blocks)."""
    sweep = [r for r in rows if r["variant"] == variant and r.get("sweep")]
    if not sweep:
        return ""
    L = _dims(sweep[0]["shape"])["L"]
    rows = [r for r in rows if r["variant"] == variant and _dims(r["shape"])["L"] == L]
    out = [f"{variant} at L = {L}, time against {what} (ms ÷ live: the time over the "
           "live fraction of 64 × 64 blocks, constant if the time is proportional to the live blocks):", "",
           f"| threads | {column} | live blocks | attnforge ms | attnforge ms ÷ live | FlexAttention ms | "
           "FlexAttention ms ÷ live | FlexAttention ÷ ours |",
           "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    by = sorted(cells(rows).items(), key=lambda kv: (kv[0][2], _dims(kv[0][1]).get(key_name, 0)))
    for key, impls in by:
        r, flex = impls.get(OURS), _prefixed(impls, "FlexAttention")
        live = (r or flex or {}).get("live_fraction")
        per = lambda x: "—" if x is None or not live else f"{x['ms'] / live:.2f}"
        ratio = f"{flex['ms'] / r['ms']:.2f}×" if r and flex else "—"
        out.append(f"| {key[2]} | {_dims(key[1]).get(key_name, '—')} | {'—' if live is None else f'{live:.3f}'} | "
                   f"{_ms(r)} | {per(r)} | {_ms(flex)} | {per(flex)} | {ratio} |")
    return "\n".join(out)


def flex_documents(rows):
    return flex_sweep(rows, "document_attention", "docs", "the number of equal documents", "documents")


def flex_prefixes(rows):
    return flex_sweep(rows, "prefix_lm_attention", "prefix", "the prefix length (the bidirectional part)", "prefix")


def flex_checks(checks):
    """The flex cells' output checks against flex_peers.reference (float64), one line per implementation."""
    out = ["| variant | shape | implementation | max abs error | bound | ok | note |",
           "| --- | --- | --- | ---: | ---: | --- | --- |"]
    for c in checks:
        if is_flex(c["variant"]):
            err = "—" if c.get("max_abs_error") is None else f"{c['max_abs_error']:.1e}"
            bound = "—" if c.get("bound") is None else f"{c['bound']:.1e}"
            out.append(f"| {c['variant']} | {c['shape']} | {c['implementation']} | {err} | {bound} | "
                       f"{'ok' if c['ok'] else '**FAILED**'} | {c.get('note', '')} |")
    return "\n".join(out)


def is_bf16(row):
    """Rows of the bf16 grid (bench/bf16_peers.py), reported apart."""
    return row.get("grid") == "bf16"


BF16_PEERS = ("OpenVINO SDPA f32", "OpenVINO SDPA bf16", "PyTorch")
FP16 = ("attnforge fp16", "ONNX Runtime Attention fp16")  # our fp16 kernels and their peer


def bf16_summary(rows):
    """One line per bf16 cell: ours in bf16 and float32, the peers, and the issue's targets per cell: bf16 >= 1.7x our
    float32, >= 75% of the bf16 peak (AMX tiles where the CPU has them, else vdpbf16ps where it beats the FMA peak, else the FMA peak), faster than every bf16 peer
    (OpenVINO bf16, PyTorch bf16)."""
    out = ["| variant | shape | threads | attnforge bf16 ms | % of bf16 peak | attnforge float32 ms | bf16 speed-up | "
           + " | ".join(f"{p} ms" for p in BF16_PEERS) + " | best bf16 peer ÷ ours | "
           + " | ".join(f"{p} ms" for p in FP16) + " |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in BF16_PEERS + FP16)
           + " | ---: |"]
    met = {"speed-up >= 1.7": [], "peak >= 75%": [], "faster than bf16 peers": []}
    for key, impls in cells(rows).items():
        ours, fp32 = impls.get(OURS), impls.get("attnforge float32")
        if ours is None:
            continue
        speedup = fp32["ms"] / ours["ms"] if fp32 else None
        bf16_peers = [r for name, r in impls.items() if not name.startswith(OURS) and r.get("dtype") == "bf16"
                      and r.get("check_ok") is not False]
        best = min((r["ms"] for r in bf16_peers), default=None)
        ratio = best / ours["ms"] if best else None
        if speedup is not None:
            met["speed-up >= 1.7"].append(speedup >= 1.7)
        met["peak >= 75%"].append(ours["fraction_of_peak"] >= 0.75)
        if ratio is not None:
            met["faster than bf16 peers"].append(ratio > 1)
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {_ms(ours)} | {_percent(ours['fraction_of_peak'])} | "
                   f"{_ms(fp32)} | {'—' if speedup is None else f'{speedup:.2f}×'} | "
                   + " | ".join(_ms(_prefixed(impls, p)) for p in BF16_PEERS)
                   + f" | {'—' if ratio is None else f'{ratio:.2f}×'} | "
                   + " | ".join(_ms(impls.get(p)) for p in FP16) + " |")
    out += ["", "bf16 targets met in " + "; ".join(f"{name}: {sum(v)} of {len(v)} cells" for name, v in met.items())
            + ". % of bf16 peak: of the bf16 peak `attnforge bench --dtype bf16` measures in the same round (AMX tiles"
            " where the CPU has them, else vdpbf16ps where it beats the FMA peak, else the FMA peak)."]
    return "\n".join(out)


def python_call_summary(rows):
    """Ours through the Python module (timed in the benchmark's process with the peers' timing function) beside
    `attnforge bench` (C++): what the Python call costs, and the peers against ours timed the same way."""
    lines, ratios, wins, smallest = [], [], 0, {}
    for key, impls in cells(rows).items():
        if OURS_PYTHON not in impls or OURS not in impls:
            continue
        py, cpp, best = impls[OURS_PYTHON], impls[OURS], best_peer_ms(impls)
        ratio = best / py["ms"] if best is not None else None
        if ratio is not None:
            ratios.append(ratio)
            wins += ratio > 1
        digits = 3 if is_decode(key[0]) else 2
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {cpp['ms']:.{digits}f} | {py['ms']:.{digits}f} | "
                     f"{py['ms'] / cpp['ms']:.3f} | {'—' if ratio is None else f'{ratio:.2f}×'} |")
        if not is_decode(key[0]):
            length = _dims(key[1]).get("L")
            if length is not None and (key[0] not in smallest or length < smallest[key[0]][0]):
                smallest[key[0]] = (length, [])
            if length is not None and length == smallest[key[0]][0]:
                smallest[key[0]][1].append(py["ms"] / cpp["ms"])
    if not lines:
        return ""
    cost = "; ".join(f"{v} L = {n}: {min(r):.3f}–{max(r):.3f}×" for v, (n, r) in smallest.items())
    head = [f"attnforge through its Python module (`attnforge.run` on the peers' inputs — NumPy arrays, torch tensors of the storage type in the bf16 grid — in this process, timed "
            f"with the peers' function): best peer ÷ ours > 1 on {wins} of {len(ratios)} cells"
            + (f", geometric mean {geometric_mean(ratios):.2f}×" if ratios else "") + ". The Python call's cost over the C++ call at each variant's smallest "
            f"length: {cost}.", "",
            "| variant | shape | threads | C++ ms | Python ms | Python ÷ C++ | best peer ÷ ours (Python) |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    return "\n".join(head + lines)


def markdown(result):
    bf16 = [r for r in result["rows"] if is_bf16(r)]
    result = {**result, "rows": [r for r in result["rows"] if not is_bf16(r)]}
    rows, s = result["rows"], speedups(result["rows"])
    prefill = any(is_prefill(r["variant"]) for r in rows)
    out = [f"Run {result['date']} on {result['machine']['cpu']} ({result['machine']['cores']} cores); "
           + ", ".join(f"{k} {v}" for k, v in result["versions"].items()) + ".",
           f"Command: `{result['command']}`. Protocol: {result['protocol']}"]
    if prefill:
        out += ["", summary(rows), "", "| target | met | measured |", "| --- | --- | --- |"]
        out += [f"| {name} | {'yes' if ok else '**no**'} | {measured} |" for name, ok, measured in targets(rows, result.get("memory"))]
    if any(is_decode(r["variant"]) for r in rows):
        out += ["", "Decode (one step over a full KV cache, bench/decode_peers.py):", "", decode_summary(rows)]
    if any(is_flex(r["variant"]) for r in rows):
        out += ["", "Flexible variants (masks and score modifiers, bench/flex_peers.py; every output, ours included, "
                "checked against flex_peers.reference over the rows with an allowed key):", "", flex_summary(rows)]
        for sweep in (flex_documents(rows), flex_prefixes(rows)):
            if sweep:
                out += ["", sweep]
        out += ["", "Flex output checks (at the first thread count):", "", flex_checks(result.get("checks", []))]
    if bf16:
        out += ["", "bf16 storage (bench/bf16_peers.py; inputs rounded to bf16 once, every output checked against "
                "float64 NumPy on them):", "", bf16_summary(bf16)]
        bf16_checks = [c for c in result.get("checks", []) if c.get("grid") == "bf16"]
        out += ["", "bf16 output checks:", "", "| variant | shape | implementation | max abs error | bound | ok |",
                "| --- | --- | --- | ---: | ---: | --- |"]
        out += [f"| {c['variant']} | {c['shape']} | {c['implementation']} | "
                f"{'—' if c.get('max_abs_error') is None else format(c['max_abs_error'], '.1e')} | "
                f"{'—' if c.get('bound') is None else format(c['bound'], '.1e')} | "
                f"{'ok' if c['ok'] else '**FAILED** ' + c.get('note', '')} |" for c in bf16_checks]
        python_calls = python_call_summary(bf16)
        if python_calls:
            out += ["", "bf16: " + python_calls]
    python_calls = python_call_summary(rows)
    if python_calls:
        out += ["", python_calls]
    retaken = sum(r.get("retaken_rounds", 0) for r in rows + bf16 if r["implementation"] == OURS)
    out += ["", f"Rounds retaken because the machine was busy (FMA peak below 85% of the best): {retaken}."]
    if prefill:
        out += ["", "Every implementation, fastest first:", "",
                "| variant | shape | threads | implementation | ms | GFLOP/s | % of FMA peak | output check | best peer ÷ ours |",
                "| --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: |"]
    decode = []
    for key, impls in cells(rows).items():
        if is_flex(key[0]):
            continue  # every implementation is in the flex table already
        for name, r in sorted(impls.items(), key=lambda kv: kv[1]["ms"]):
            ok = {True: "ok", False: "**FAILED**", None: "reference" if name == OURS else "—"}[r["check_ok"]]
            ratio = f"**{s[key]:.2f}×**" if name == OURS and key in s else ""
            if is_decode(key[0]):
                decode.append(f"| {key[0]} | {key[1]} | {key[2]} | {name} | {r['ms']:.3f} | {r['gbs']:.1f} | "
                              f"{_percent(r.get('fraction_of_read_bandwidth'))} | {ok} | {ratio} |")
            else:
                out.append(f"| {key[0]} | {key[1]} | {key[2]} | {name} | {r['ms']:.2f} | {r['gflops']:.1f} | "
                           f"{100 * r['fraction_of_peak']:.1f} | {ok} | {ratio} |")
    if decode:
        out += ["", "Decode, every implementation, fastest first (every output, ours included, checked against "
                "decode_peers.decode_reference):", "",
                "| variant | shape | threads | implementation | ms | GB/s | % of read bandwidth | output check | best peer ÷ ours |",
                "| --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: |"] + decode
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # report.py results.json: the Markdown again, from a run's JSON
    import json
    import sys
    with open(sys.argv[1]) as f:
        print(markdown(json.load(f)), end="")
