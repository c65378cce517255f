"""bf16 kernels multiply with AVX512_BF16's vdpbf16ps, or AMX tiles where the target has them (on Intel's cores
without tiles prefill multiplies in float32, decoding with vdpbf16ps); fp16 kernels convert with F16C's vcvtph2ps.

Generates the assembly of bf16 and fp16 kernels with the build's generator for explicit targets (a
cross-compilation: the machine running the test need not have the instructions) and reads the loops
Halide labels by Func: the innermost loop of the score product Q·Kᵀ (`score_N_sum.s1.…`), of P·V
(`weighted_sum_N_sum.s1.…`, streaming `…_block_weighted.s1.…`) and of a projection (`linear_N_sum.s1.…`)
must be vdpbf16ps register tiles, with
no float32 FMA left in them. The same kernels for a target without AVX512_BF16 (AVX2) still build and
multiply in float32 (tests/kernels runs them in the multi-target build).

usage: check_bf16_dot_products.py GENERATOR OUT_DIR
"""
import pathlib
import re
import subprocess
import sys

ZEN4 = "x86-64-linux-avx512_zen4-no_runtime"
# Sapphire Rapids as Halide's host detection names it: AMX tiles besides AVX512_BF16
SAPPHIRE_RAPIDS = ("x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-avxvnni-f16c-"
                   "fma-sse41-no_runtime")
AVX2 = "x86-64-linux-avx2-fma-f16c-no_runtime"

# On AMX (Tiles::amx_products, lower/amx_tiles.hpp): (variant, strategy, tile products at least: Q·Kᵀ and P·V)
AMX_KERNELS = [
    ("sdpa", "materialized", 2),
    ("sdpa_causal", "materialized", 2),  # the band skips whole panels and steps, outside the tiles
    ("sdpa", "streaming", 2),
    # the Q, K, V and output projections too, and Q·Kᵀ and P·V of the projected (rounded) Q, K, V
    ("mha", "materialized", 6),
    ("gqa", "streaming", 6),
]

# (variant, strategy, the Funcs whose inner loops must be vdpbf16ps: every one, or (Func, how many at least))
BF16_KERNELS = [
    ("sdpa", "materialized", ["score", "weighted_sum"]),
    ("sdpa", "streaming", ["score", "weighted_sum"]),
    ("sdpa_causal", "materialized", ["score", "weighted_sum"]),  # a causal band keeps the pairs whole
    # x · W of the Q, K, V and output projections (the heads rounded to bf16), and Q·Kᵀ and P·V of the projected
    # Q, K, V (rounded to bf16: docs/storage_types.md)
    ("mha", "materialized", ["score", "weighted_sum", ("linear", 4)]),
    ("gqa", "streaming", ["score", "weighted_sum", ("linear", 4)]),
    # decoding reads bf16 Q, K and V as stored: Q·Kᵀ along each key row (its loop over keys, the lanes folded
    # in the same loop) and P·V over pairs of keys
    ("decode_gqa", "decode", [("score", None, r"score_\d+_sum\.s0\.k\.ko"), "weighted_sum"]),
]


def hides_tiles():
    """An Intel CPU that Halide's host detection names avx512_sapphirerapids (AVX-VNNI and AVX512_BF16) without AMX's
    own flags (a virtual machine hiding the tiles): the generator makes no tile products there, for any target."""
    with open("/proc/cpuinfo") as f:
        text = f.read()
    flags = set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))
    return ("GenuineIntel" in text and {"avx512_bf16", "avx_vnni"} <= flags
            and not {"amx_tile", "amx_bf16"} <= flags)


def generate(generator, out, name, target, **params):
    out.mkdir(parents=True, exist_ok=True)
    args = [generator, "-n", name, "-d", "0", "-g", "attnforge_attention", "-f", name, "-e", "assembly",
            "-o", str(out), f"target={target}"] + [f"{k}={v}" for k, v in params.items()]
    if params.get("variant") in ("sdpa", "sdpa_causal", "decode"):
        args.append("head_width=64")  # their E is run-time: a kernel is generated per width
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: generating {name} ({' '.join(args[-4:])}) failed:\n{done.stderr[-2000:]}")
    return (out / f"{name}.s").read_text()


def inner_loops(assembly):
    """(Halide's loop label, instructions) of every innermost loop."""
    loops, label, body, inner = [], None, [], False
    for line in assembly.splitlines():
        m = re.match(r"^\.LBB\S+:\s*#\s*%\"?([^\"]*)\"?", line)
        if m:
            if label is not None and inner:
                loops.append((label, body))
            label, body, inner = m.group(1), [], False
            continue
        if label is None:
            continue
        if "Inner Loop Header" in line:
            inner = True
        elif re.match(r"^(\.LBB|# %bb)", line):
            if inner:
                loops.append((label, body))
            label, body, inner = None, [], False
        elif line.startswith("\t") and not line.lstrip().startswith((".", "#")):
            body.append(line.split()[0])
    return loops


def main():
    generator, out = sys.argv[1], pathlib.Path(sys.argv[2])
    failures = []
    for variant, strategy, products in BF16_KERNELS:
        name = f"{variant}_{strategy}_bf16"
        loops = inner_loops(generate(generator, out, name, ZEN4, variant=variant, result="output",
                                     strategy=strategy, dtype="bf16"))
        for product in products:
            product, at_least, pattern = (product + (None,))[:3] if isinstance(product, tuple) else (product, None, None)
            pattern = pattern or rf"{product}_\d+_\w*sum\.s1\.|{product}_\d+_block_weighted\w*\.s1\."
            found = [(label, body) for label, body in loops if re.search(pattern, label)]
            if not found:
                failures.append(f"{name}: no inner loop of {product} in the assembly ({out}/{name}.s)")
            paired = []
            for label, body in found:
                dots = body.count("vdpbf16ps")
                fmas = sum(1 for i in body if i.startswith("vfmadd"))
                if dots and not fmas:
                    paired.append(label)
                    print(f"ok {name}: loop {label}: {dots} vdpbf16ps")
                elif at_least is None:
                    failures.append(f"{name}: loop {label}: {dots} vdpbf16ps, {fmas} float32 FMAs")
            if at_least is not None and len(paired) < at_least:
                failures.append(f"{name}: {len(paired)} loops of {product} are vdpbf16ps, expected {at_least} or more")
        # Without AVX512_BF16 the same kernel builds, multiplying in float32.
        avx2 = generate(generator, out, name + "_avx2", AVX2, variant=variant, result="output",
                        strategy=strategy, dtype="bf16")
        if "vdpbf16ps" in avx2 or "vfmadd" not in avx2:
            failures.append(f"{name} for {AVX2}: expected float32 FMAs and no vdpbf16ps")
    # AMX tile products where the target has them; none for Zen 4 (checked above: vdpbf16ps loops).
    no_tiles_here = hides_tiles()
    for variant, strategy, at_least in AMX_KERNELS:
        name = f"{variant}_{strategy}_bf16_amx"
        text = generate(generator, out, name, SAPPHIRE_RAPIDS, variant=variant, result="output", strategy=strategy,
                        dtype="bf16")
        tiles = text.count("tdpbf16ps")
        if no_tiles_here:
            # Nor vdpbf16ps, at half the FMA rate on Intel's cores: float32 FMAs on the converted values.
            dots = text.count("vdpbf16ps")
            if tiles or dots or "vfmadd" not in text:
                failures.append(f"{name}: {tiles} tdpbf16ps, {dots} vdpbf16ps generated on a machine whose CPU hides "
                                "AMX tiles (expected float32 FMAs)")
            else:
                print(f"ok {name}: float32 FMAs, no tile products (this CPU has AVX512_BF16 and AVX-VNNI without "
                      "AMX's flags)")
        elif tiles < at_least:
            failures.append(f"{name}: {tiles} tdpbf16ps in {out}/{name}.s, expected {at_least} or more")
        else:
            print(f"ok {name}: {tiles} tdpbf16ps")
        zen4 = (out / f"{variant}_{strategy}_bf16.s").read_text()
        if "tdpbf16ps" in zen4:
            failures.append(f"{variant}_{strategy}_bf16 for {ZEN4}: tile instructions on a target without AMX")
    # Decoding keeps vdpbf16ps on Intel's cores, tiles or none (attention_generator.hpp: bf16_dot_product_pays).
    name = "decode_gqa_decode_bf16_sapphirerapids"
    text = generate(generator, out, name, SAPPHIRE_RAPIDS, variant="decode_gqa", result="output", strategy="decode",
                    dtype="bf16")
    if "vdpbf16ps" not in text:
        failures.append(f"{name}: no vdpbf16ps in {out}/{name}.s")
    else:
        print(f"ok {name}: {text.count('vdpbf16ps')} vdpbf16ps")
    # fp16 storage: the F16C conversion where inputs are read.
    for strategy in ("materialized", "streaming"):
        name = f"sdpa_{strategy}_fp16"
        text = generate(generator, out, name, AVX2, variant="sdpa", result="output", strategy=strategy, dtype="fp16")
        if "vcvtph2ps" not in text:
            failures.append(f"{name}: no vcvtph2ps (F16C) in {out}/{name}.s")
        else:
            print(f"ok {name}: {text.count('vcvtph2ps')} vcvtph2ps")
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
