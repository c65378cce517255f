"""Full key blocks skip the predicate: a streaming kernel visits the blocks a mask predicate keeps whole without
evaluating it (docs/dsl.md, "Which key blocks a kernel skips").

Generates the lowered statement of streaming kernels with the build's generator and reads the copies of the
online softmax's loop over key blocks (`…_state.s1.rb$x`; Halide copies it where it partitions the query tile
loop, and the schedule unrolls the two passes over full and partial blocks). A copy evaluates the predicate
where it compares a vector of key indices with the query (`ramp(…) <= x16(…)`; the test of the last block's tail,
`< x16(k.extent.1)`, is not one). A kernel whose predicate fills blocks must have copies without a comparison
(the full blocks) and copies with one (the partial blocks); a causal kernel, whose mask is a band and not a
predicate, compares in every copy: the reading sees the comparisons it looks for.

usage: check_full_blocks.py GENERATOR OUT_DIR
"""
import pathlib
import re
import subprocess
import sys

# (variant, whether its kernel has copies of the block loop without the predicate)
KERNELS = [
    ("sliding_window_attention", True),  # a sliding window: full blocks behind the diagonal
    ("prefix_lm_attention", True),       # kv <= q || kv < prefix_length(b): full below the diagonal
    ("sdpa_causal", False),              # causal is a band mask: tested in every block
]

BLOCK_LOOP = re.compile(r"for \(\w+_state\.s1\.rb\$x")
_ARG = r"(?:[^()]|\([^()]*\))*"
KEY_COMPARISON = re.compile(rf"ramp\({_ARG}\)\s*(?:<=|>=|==|!=|<|>)\s*x\d+\({_ARG}\)|x\d+\({_ARG}\)\s*(?:<=|>=|==|!=|<|>)\s*ramp\(")


def lowered(generator, out, variant):
    out.mkdir(parents=True, exist_ok=True)
    args = [generator, "-n", variant, "-d", "0", "-g", "attnforge_attention", "-f", variant, "-e", "stmt",
            "-o", str(out), "target=host-no_runtime", f"variant={variant}", "result=output", "strategy=streaming"]
    if variant in ("sdpa", "sdpa_causal", "decode", "sliding_window_attention"):
        args.append("head_width=64")  # their E is run-time: a kernel is generated per width
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"generating {variant} failed: {done.stderr}")
    return (out / f"{variant}.stmt").read_text()


def comparisons_per_copy(text):
    starts = [m.start() for m in BLOCK_LOOP.finditer(text)]
    ends = starts[1:] + [len(text)]
    return [sum(".extent." not in m.group(0) for m in KEY_COMPARISON.finditer(text[a:b])) for a, b in zip(starts, ends)]


def main():
    generator, out = sys.argv[1], pathlib.Path(sys.argv[2])
    failures = []
    for variant, fills in KERNELS:
        counts = comparisons_per_copy(lowered(generator, out, variant))
        print(f"{variant}: key comparisons in each copy of the block loop: {counts}")
        if not counts:
            failures.append(f"{variant}: no loop over key blocks found")
        elif fills and (min(counts) != 0 or max(counts) == 0):
            failures.append(f"{variant}: expected copies without the predicate (full blocks) and with it, got {counts}")
        elif not fills and min(counts) == 0:
            failures.append(f"{variant}: expected the mask tested in every copy, got {counts}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
