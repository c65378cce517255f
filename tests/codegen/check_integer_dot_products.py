"""8-bit caches with a scale per token (decode_u8, decode_i8) compute Q·Kᵀ on AVX512_VNNI's vpdpbusd where a task has
four query rows or more, and in float32 below (docs/storage_types.md, "Integer dot products").

Generates the decode kernels' assembly with the build's generator for explicit targets (a cross-compilation, as
check_bf16_dot_products.py) and reads the innermost loops of the score sum (`score_N_sum_of_either.s0.k.ko…`):
for Zen 4 one form must be vpdpbusd, 3 digits × E/16 chunks × 4 keys of them a step (the rows-in-lanes product),
and one float32 FMAs without vpdpbusd (the lanes-along-E product the sum keeps for fewer rows); for AVX2, and for a
float32 cache, no vpdpbusd at all.

usage: check_integer_dot_products.py GENERATOR OUT_DIR
"""
import pathlib
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for the module below
from check_bf16_dot_products import AVX2, ZEN4, generate, inner_loops  # noqa: E402

HEAD_WIDTH = 128
KEYS_PER_STEP = 4
DIGITS = 3


def main():
    generator, out = sys.argv[1], pathlib.Path(sys.argv[2])
    failures = []
    expected = DIGITS * HEAD_WIDTH // 16 * KEYS_PER_STEP
    for variant in ("decode_u8", "decode_i8"):
        name = f"{variant}_integer"
        params = dict(variant=variant, result="output", strategy="decode", head_width=HEAD_WIDTH)
        loops = [(label, body) for label, body in inner_loops(generate(generator, out, name, ZEN4, **params))
                 if re.search(r"score_\d+_sum_of_either\.s0\.k\.ko", label)]
        if not loops:
            failures.append(f"{name}: no inner loop of the score sum in {out}/{name}.s")
            continue
        integer = [label for label, body in loops if body.count("vpdpbusd") == expected]
        floating = [label for label, body in loops
                    if "vpdpbusd" not in body and any(i.startswith("vfmadd") for i in body)]
        if not integer:
            counts = ", ".join(f"{label}: {body.count('vpdpbusd')}" for label, body in loops)
            failures.append(f"{name}: no score loop with {expected} vpdpbusd ({counts})")
        if not floating:
            failures.append(f"{name}: no float32 score loop for fewer than four rows")
        if integer and floating:
            print(f"ok {name}: {len(integer)} loops of {expected} vpdpbusd, {len(floating)} float32")
        avx2 = generate(generator, out, name + "_avx2", AVX2, **params)
        if "vpdpbusd" in avx2 or "vfmadd" not in avx2:
            failures.append(f"{name} for {AVX2}: expected float32 FMAs and no vpdpbusd")
    plain = generate(generator, out, "decode_float32", ZEN4, variant="decode", result="output", strategy="decode")
    if "vpdpbusd" in plain:
        failures.append("decode (a float32 cache): vpdpbusd generated")
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
