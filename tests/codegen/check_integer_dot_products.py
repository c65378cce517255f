"""8-bit caches with a scale per token (decode_u8, decode_i8) compute Q·Kᵀ and P·V on AVX512_VNNI's vpdpbusd
(docs/storage_types.md, "Integer dot products").

Generates the decode kernels' assembly with the build's generator for explicit targets (a cross-compilation, as
check_bf16_dot_products.py) and reads the innermost loops. Score sum (`score_N_sum_of_either.s0.k.ko…`): for Zen 4
one form must be 3 digits × E/16 chunks × 4 keys vpdpbusd a step (four query rows along the lanes), one 3 × E/16
over K rows inserted four keys a vector (vinserti32x4; four keys along the lanes, for fewer rows). P·V
(`weighted_sum_N_integer_sums.s1…`, fewer than four rows): 3 digits × 8 vectors of vpdpbusd a step of four keys at
E = 128, the codes interleaved by vpermt2b, no float32 FMA; four rows or more keep a float32 P·V loop
(`weighted_sum_N_block_weighted.s1…`, FMAs and no vpdpbusd). For AVX2, and for a float32 cache, no vpdpbusd at all.
The tile-wide loops that weigh the exps by V's per-key factors (`…block_weights.s0.kk…`, `…block_zero_sum_lanes…`)
load the factors densely, scalar-by-scalar gathers only in their partitioned last steps (`….rebased`): a partition
of the state's tile loop (rb) would leave the real tiles in its unpartitioned copy, every vector a gather.

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
VALUE_PRODUCTS = DIGITS * HEAD_WIDTH // 16  # a step's vpdpbusd in P·V (8 columns of one row) and in the keys-in-lanes
GATHER = ("vinsertps", "vpinsrd", "vpextrd", "vmovss", "vgatherdps")  # a clamped vector index, lane by lane


def main():
    generator, out = sys.argv[1], pathlib.Path(sys.argv[2])
    failures = []
    expected = DIGITS * HEAD_WIDTH // 16 * KEYS_PER_STEP
    for variant in ("decode_u8", "decode_i8"):
        name = f"{variant}_integer"
        params = dict(variant=variant, result="output", strategy="decode", head_width=HEAD_WIDTH)
        all_loops = inner_loops(generate(generator, out, name, ZEN4, **params))
        loops = [(label, body) for label, body in all_loops if re.search(r"score_\d+_sum_of_either\.s0\.k\.ko", label)]
        values = [(label, body) for label, body in all_loops if re.search(r"weighted_sum_\d+_integer_sums\.s1", label)]
        good_values = [label for label, body in values if body.count("vpdpbusd") == VALUE_PRODUCTS
                       and "vpermt2b" in body and not any(i.startswith("vfmadd") for i in body)]
        if not good_values:
            counts = ", ".join(f"{label}: {body.count('vpdpbusd')}" for label, body in values)
            failures.append(f"{name}: no P·V loop of {VALUE_PRODUCTS} vpdpbusd over vpermt2b "
                            f"({counts or 'no P·V loop over codes'})")
        else:
            print(f"ok {name}: {len(good_values)} P·V loops of {VALUE_PRODUCTS} vpdpbusd")
        factor_loops = [(label, body) for label, body in all_loops
                        if re.search(r"block_(weights\.s0\.kk|zero_sum_lanes\.s1\.rv)", label)
                        and not label.endswith(".rebased")]
        gathering = [label for label, body in factor_loops if any(i in GATHER for i in body)]
        if not factor_loops or gathering:
            failures.append(f"{name}: per-key factors gathered in the tiles' loops "
                            f"({', '.join(gathering) or 'no loop of block_weights'})")
        else:
            print(f"ok {name}: {len(factor_loops)} tile loops read the per-key factors densely")
        float_values = [label for label, body in all_loops
                        if re.search(r"weighted_sum_\d+_block_weighted\.s1", label) and "vpdpbusd" not in body
                        and any(i.startswith("vfmadd") for i in body)]
        if not float_values:
            failures.append(f"{name}: no float32 P·V loop (block_weighted) for four rows or more")
        if not loops:
            failures.append(f"{name}: no inner loop of the score sum in {out}/{name}.s")
            continue
        integer = [label for label, body in loops if body.count("vpdpbusd") == expected]
        keys_in_lanes = [label for label, body in loops
                         if body.count("vpdpbusd") == VALUE_PRODUCTS and "vinserti32x4" in body]
        if not integer:
            counts = ", ".join(f"{label}: {body.count('vpdpbusd')}" for label, body in loops)
            failures.append(f"{name}: no score loop with {expected} vpdpbusd ({counts})")
        if not keys_in_lanes:
            counts = ", ".join(f"{label}: {body.count('vpdpbusd')}" for label, body in loops)
            failures.append(f"{name}: no score loop of {VALUE_PRODUCTS} vpdpbusd over inserted K rows for fewer than "
                            f"four rows ({counts})")
        if integer and keys_in_lanes:
            print(f"ok {name}: {len(integer)} score loops of {expected} vpdpbusd, {len(keys_in_lanes)} of "
                  f"{VALUE_PRODUCTS}")
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
