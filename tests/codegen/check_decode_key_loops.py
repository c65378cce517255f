"""A decode kernel's loops over a key tile end at kv_length: none runs over the whole tile of k_block keys with the
keys past kv_length predicated off (docs/performance.md, decode: "A key tile's loops end at kv_length").

Halide trims a loop whose body is a predicate on the key (`if (rk < valid) …`) to the valid keys, but only while
nothing else in the body runs past them: a software prefetch placed in the key loop itself kept all 2048 steps of P·V
at any kv_length (decode at Lk = 1 took 64 µs a call instead of 10), and one in a loop over spans of 4 keys kept its
512 spans. Float32 V is now prefetched in the loop over a span's keys, the spans a reduction dimension of their own
with a condition of their own (lower/online_softmax.hpp, key_block), so the loop over spans ends at kv_length.
Generates the lowered statement of decode kernels with the build's generator (float32, whose K and V rows are
prefetched; bf16, whose K rows are where four rows run inside the keys; uint8) and reads the extents of the loops over
keys (`…rk$x…`, `…rk$y…`, `…k.ko`, `…kk…`; at least one must be found): a constant extent of a whole tile (k_block),
or of its steps or spans of 4 keys, fails. The float32 kernels must also prefetch V (a prefetch of `v`'s rows): the
check could otherwise pass on a schedule that lost the prefetch along with the loop.

usage: check_decode_key_loops.py GENERATOR OUT_DIR
"""
import pathlib
import re
import subprocess
import sys

K_BLOCK = 2048
# (name, generator parameters): the forms of decode's P·V and Q·Kᵀ (run-time GQA with four rows inside the keys,
# a fixed group's one-query pass, bf16 pairs, uint8 codes).
KERNELS = [  # (name, generator parameters, whether V's rows are prefetched)
    ("decode_f32", ["variant=decode", "head_width=128"], True),
    ("decode_gqa_f32", ["variant=decode_gqa"], True),
    ("decode_bf16", ["variant=decode", "head_width=128", "dtype=bf16"], False),
    ("decode_u8", ["variant=decode_u8", "head_width=128"], False),
]
V_PREFETCH = re.compile(r"llvm\.prefetch[.\w]*\(reinterpret<\(void \*\)>\(reinterpret<uint64>\(v\)")

KEY_LOOP = re.compile(r"for \(([\w.$]*(?:rk\$[xy]|\.k\.ko|\.kk)[\w.$]*), (.+), (.+?)\) \{$", re.MULTILINE)
KEYS_PER_STEP = 4  # the fewest keys a step of a split key loop takes (Q·Kᵀ's steps, V's spans)


def lowered(generator, out, name, parameters):
    out.mkdir(parents=True, exist_ok=True)
    args = [generator, "-n", name, "-d", "0", "-g", "attnforge_attention", "-f", name, "-e", "stmt", "-o", str(out),
            "target=host-no_runtime", "result=output", "strategy=decode", f"k_block={K_BLOCK}",
            f"split_keys={K_BLOCK}", *parameters]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"generating {name} failed: {done.stderr}")
    return (out / f"{name}.stmt").read_text()


def main():
    generator, out = sys.argv[1], pathlib.Path(sys.argv[2])
    failures = []
    for name, parameters, prefetches_values in KERNELS:
        text = lowered(generator, out, name, parameters)
        if prefetches_values and not V_PREFETCH.search(text):
            failures.append(f"{name}: V's rows are not prefetched (the schedule lost the prefetch)")
        loops = KEY_LOOP.findall(text)
        constant = [(var, int(extent)) for var, _, extent in loops if extent.isdigit()]
        print(f"{name}: {len(loops)} key loops; of constant extent: {constant or 'none'}")
        if not loops:
            failures.append(f"{name}: no key loop found (renamed? the check reads nothing)")
        # A loop over every key of the tile, or over every step or span of a split one.
        whole = [(var, n) for var, n in constant if n >= K_BLOCK // KEYS_PER_STEP]
        if whole:
            failures.append(f"{name}: key loops over the whole tile regardless of kv_length: {whole}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
