#!/usr/bin/env python3
"""CLI tests for `attnforge list`, `run` and `bench --json` (docs/contract.md §3, §4).

Round trips: for every variant `attnforge list --json` shows, NumPy writes inputs of the listed
shapes, both engines run, and the kernel's output and attention weights agree with the
interpreter's within docs/contract.md §5. Errors: every exit-status-2 case leaves no output file and says
what was expected on one stderr line.

Usage: test_cli.py PATH/TO/attnforge   (run by CTest)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

ATTNFORGE = None
LENGTHS = {"x": 5, "memory": 7, "q": 6, "kv": 9, "tokens": 8}  # by sequence tag; Lq != Lk where a variant allows it
# The head widths this build made for sdpa, sdpa_causal and decode (its -DATTNFORGE_HEAD_WIDTHS; default: the contract's).
HEAD_WIDTHS = sorted(int(w) for w in os.environ.get("ATTNFORGE_BUILD_HEAD_WIDTHS", "").split(",") if w) or [
    64, 80, 96, 128, 256]


def attnforge(*args):
    return subprocess.run([ATTNFORGE, *args], capture_output=True, text=True)


def shape_of(symbol, batch=2, heads=3, kv_heads=1, head_width=64):
    """Hkv = 1 (MQA) where a variant's key/value head count is run-time: every query head reads the one."""
    dims = []
    for part in symbol.strip("()").split(","):
        part = part.strip().removesuffix(" or 1")  # a mask's broadcast axis: given whole here
        if part == "B":
            dims.append(batch)
        elif part == "H":
            dims.append(heads)
        elif part == "Hkv":
            dims.append(kv_heads)
        elif part == "E":
            dims.append(head_width)
        elif part.startswith("E/"):  # a quantized cache's groups of channels
            dims.append(head_width // int(part[2:]))
        elif part.startswith("L[") and "]/" in part:  # blocks of T tokens of a sequence (keys by channel)
            name, block = part[2:].split("]/")
            dims.append(-(-LENGTHS[name] // int(block)))
        elif part.startswith("L["):
            dims.append(LENGTHS[part[2:-1]])
        elif part:
            dims.append(int(part))
    return tuple(dims)


def width_of(variant):
    """A run-time E the build made kernels of for this variant: 64 where it did (some variants are built for one
    other width only: softcap_sliding_window_attention for Gemma-2's 256)."""
    widths = sorted({k["head_width"] for k in variant["kernels"] if k["head_width"]})
    return 64 if not widths or 64 in widths else widths[0]


def write_inputs(variant, directory, rng):
    args = []
    for spec in variant["inputs"]:
        shape = shape_of(spec["shape"], head_width=width_of(variant))
        if spec["shape"].startswith("(B, L[") and spec["shape"].count(",") == 1 and spec["dtype"] == "int32":
            value = np.sort(rng.integers(0, 3, shape), axis=1).astype(np.int32)  # document ids, in runs
        elif spec["name"] == "kv_length":  # a cache's valid lengths, at most its size L[kv]
            value = rng.integers(0, LENGTHS["kv"] + 1, shape).astype(np.int32)
        elif spec["shape"] == "()" and spec["dtype"] == "int32":  # a window, given (a call may leave it out)
            value = np.array(3, np.int32)
        elif spec["name"] == "cap":  # a soft-cap: positive, small enough to cap
            value = np.array(2.5, np.float32)
        elif spec["shape"] == "(B)":
            # prefix lengths, as float32 holding whole numbers (accepted for index inputs, contract §4)
            value = rng.integers(0, max(LENGTHS.values()) + 1, shape).astype(np.float32)
        elif spec["dtype"] == "uint8":  # a quantized cache's codes (its scales and zero points: floats, below)
            value = rng.integers(0, 256, shape).astype(np.uint8)
        elif spec["dtype"] == "int8":
            value = rng.integers(-128, 128, shape).astype(np.int8)
        elif spec["dtype"] == "bool":
            value = rng.random(shape) < 0.3
            if spec["name"] == "attn_mask":
                value = ~value
        else:
            scale = 1 / np.sqrt(shape[0]) if len(shape) == 2 and "L" not in spec["shape"] else 1.0
            value = (rng.uniform(-1, 1, shape) * scale).astype(np.float32)
        path = os.path.join(directory, spec["name"] + ".npy")
        np.save(path, value)
        args += ["--input", f"{spec['name']}={path}"]
    return args


class ListTest(unittest.TestCase):
    def test_json_lists_every_contract_variant_with_kernels(self):
        r = attnforge("list", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        variants = {v["variant"]: v for v in json.loads(r.stdout)}
        for name in ["seed_attention", "sdpa", "sdpa_causal", "mha", "mha_causal", "mha_padding",
                     "cross_attention", "gqa", "self_attention_layer"]:
            self.assertIn(name, variants)
            self.assertTrue(any(k["result"] == "output" for k in variants[name]["kernels"]))
        self.assertEqual([i["name"] for i in variants["mha"]["inputs"]], ["x", "wq", "wk", "wv", "wo"])
        self.assertEqual(variants["sdpa"]["output"]["shape"], "(B, H, L[q], E)")
        # The head widths of the contract's models, each with its own kernels.
        for name in ["sdpa", "sdpa_causal", "decode"]:
            self.assertEqual({k["head_width"] for k in variants[name]["kernels"]}, set(HEAD_WIDTHS))

    def test_text_names_strategy_sizes_and_target(self):
        r = attnforge("list")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sdpa__E64__streaming", r.stdout)
        self.assertIn("Lk<=8192", r.stdout)
        self.assertIn("x86-64", r.stdout)


class RoundTripTest(unittest.TestCase):
    def test_every_variant_kernel_matches_interpreter_through_npy(self):
        variants = json.loads(attnforge("list", "--json").stdout)
        rng = np.random.default_rng(7)
        for variant in variants:
            name = variant["variant"]
            with self.subTest(variant=name), tempfile.TemporaryDirectory() as d:
                inputs = write_inputs(variant, d, rng)
                outs = {}
                for engine in ("kernel", "interpreter"):
                    out, weights, lse = (os.path.join(d, f"{engine}{s}.npy") for s in ("", "_w", "_lse"))
                    r = attnforge("run", name, *inputs, "--output", out, "--engine", engine,
                                  "--attention-weights", weights, "--logsumexp", lse)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    outs[engine] = (np.load(out), np.load(weights), np.load(lse))
                    self.assertEqual(outs[engine][0].dtype, np.float32)
                    self.assertEqual(outs[engine][0].shape,
                                     shape_of(variant["output"]["shape"], head_width=width_of(variant)))
                    # (B, Hq, Lq, Lk) always: an unbatched variant's weights have B = 1 (docs/contract.md §3);
                    # the log-sum-exp is (B, Hq, Lq), the same rows.
                    self.assertEqual(outs[engine][1].ndim, 4, outs[engine][1].shape)
                    self.assertEqual(outs[engine][2].shape, outs[engine][1].shape[:3])
                for k, ref in zip(outs["kernel"], outs["interpreter"]):
                    # Fully masked rows: a log-sum-exp of −∞ on both sides; the rest within the bound.
                    np.testing.assert_array_equal(np.isneginf(k), np.isneginf(ref))
                    k, ref = k[np.isfinite(ref)], ref[np.isfinite(ref)]
                    bound = 1e-4 * (1 + np.abs(ref).max(initial=0))
                    self.assertLessEqual(np.abs(k - ref).max(initial=0), bound)

    def assert_kernel_matches_interpreter(self, variant, inputs, directory):
        """`run variant` with the kernel and with the interpreter: within the float32 bound of each other."""
        outs = {}
        for engine in ("kernel", "interpreter"):
            outs[engine] = os.path.join(directory, engine + ".npy")
            r = attnforge("run", variant, *inputs, "--output", outs[engine], "--engine", engine)
            self.assertEqual(r.returncode, 0, r.stderr)
        got, ref = np.load(outs["kernel"]), np.load(outs["interpreter"])
        self.assertLessEqual(np.abs(got - ref).max(), 1e-4 * (1 + np.abs(ref).max()))

    def test_quantize_writes_a_cache_decode_u8_reads(self):
        """`attnforge quantize` makes a uint8 cache (a prompt, then one more token into the same files); `run
        decode_u8` over the files equals the interpreter's decode over the values they stand for."""
        rng = np.random.default_rng(11)
        with tempfile.TemporaryDirectory() as d:
            path = {n: os.path.join(d, n + ".npy") for n in ("q", "kv_length", "x", "x1", "lengths0", "lengths1")}
            np.save(path["x"], rng.normal(size=(2, 1, 5, 64)).astype(np.float32))
            np.save(path["x1"], rng.normal(size=(2, 1, 1, 64)).astype(np.float32))
            np.save(path["lengths1"], np.array([5, 5], np.int32))
            np.save(path["q"], rng.normal(size=(2, 3, 1, 64)).astype(np.float32))
            np.save(path["kv_length"], np.array([6, 4], np.int32))
            inputs = []
            for n in ("k", "v"):
                files = [f"--{p}={d}/{n}_{p}.npy" for p in ("codes", "scale", "zero")]
                r = attnforge("quantize", "--values", path["x"], *files, "--lmax", "8")
                self.assertEqual(r.returncode, 0, r.stderr)
                r = attnforge("quantize", "--values", path["x1"], *files, "--kv-length", path["lengths1"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(np.load(f"{d}/{n}_codes.npy").dtype, np.uint8)
                inputs += [f"--input={n}={d}/{n}_codes.npy", f"--input={n}_scale={d}/{n}_scale.npy",
                           f"--input={n}_zero={d}/{n}_zero.npy"]
            inputs += [f"--input=q={path['q']}", f"--input=kv_length={path['kv_length']}"]
            codes, scale, zero = (np.load(f"{d}/k_{p}.npy") for p in ("codes", "scale", "zero"))
            dense = (codes - zero[..., None]) * scale[..., None]
            x = np.concatenate([np.load(path["x"]), np.load(path["x1"])], axis=2)
            self.assertLessEqual(np.abs(dense[:, :, :6] - x).max(), 0.51 * scale[:, :, :6].max())
            self.assert_kernel_matches_interpreter("decode_u8", inputs, d)
            # Codes given as float32 are the wrong dtype; a new token past the cache's slots is bad input.
            np.save(f"{d}/bad.npy", np.zeros((2, 1, 8, 64), np.float32))
            r = attnforge("run", "decode_u8", *[a if not a.startswith("--input=k=") else f"--input=k={d}/bad.npy"
                                                for a in inputs], "--output", os.path.join(d, "o.npy"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("input 'k'", r.stderr)
            self.assertIn("uint8", r.stderr)
            np.save(path["lengths1"], np.array([8, 0], np.int32))
            r = attnforge("quantize", "--values", path["x1"], f"--codes={d}/k_codes.npy", f"--scale={d}/k_scale.npy",
                          f"--zero={d}/k_zero.npy", "--kv-length", path["lengths1"])
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("entry 0: slots 8..8", r.stderr)
            r = attnforge("quantize", "--values", path["x1"], f"--codes={d}/k_codes.npy", f"--scale={d}/k_scale.npy",
                          f"--zero={d}/k_zero.npy")  # an existing cache and no --kv-length: where would they go?
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--kv-length is needed", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "o.npy")))

    def test_quantize_writes_an_int8_cache_by_group_decode_i8_g32_reads(self):
        """`attnforge quantize` without --zero makes int8 codes (|i1) with a scale per --group channels; `run
        decode_i8_g32` over the files: kernel against the interpreter. A group that does not divide E is refused."""
        rng = np.random.default_rng(12)
        with tempfile.TemporaryDirectory() as d:
            x, q, lengths = (os.path.join(d, n + ".npy") for n in ("x", "q", "kv_length"))
            np.save(x, rng.normal(size=(1, 2, 7, 64)).astype(np.float32))
            np.save(q, rng.normal(size=(1, 4, 1, 64)).astype(np.float32))
            np.save(lengths, np.array([7], np.int32))
            inputs = [f"--input=q={q}", f"--input=kv_length={lengths}"]
            for n in ("k", "v"):
                r = attnforge("quantize", "--values", x, f"--codes={d}/{n}.npy", f"--scale={d}/{n}_scale.npy",
                              "--group", "32")
                self.assertEqual(r.returncode, 0, r.stderr)
                inputs += [f"--input={n}={d}/{n}.npy", f"--input={n}_scale={d}/{n}_scale.npy"]
            codes, scale = np.load(f"{d}/k.npy"), np.load(f"{d}/k_scale.npy")
            self.assertEqual((codes.dtype, codes.shape, scale.shape), (np.int8, (1, 2, 7, 64), (1, 2, 7, 2)))
            dense = codes * np.repeat(scale, 32, axis=-1)
            self.assertLessEqual(np.abs(dense - np.load(x)).max(), 0.51 * scale.max())
            self.assert_kernel_matches_interpreter("decode_i8_g32", inputs, d)
            # One more token into the existing files: the scale file's shape gives the group.
            np.save(os.path.join(d, "x1.npy"), rng.normal(size=(1, 2, 1, 64)).astype(np.float32))
            np.save(os.path.join(d, "at.npy"), np.array([6], np.int32))
            r = attnforge("quantize", "--values", os.path.join(d, "x1.npy"), f"--codes={d}/k.npy",
                          f"--scale={d}/k_scale.npy", "--kv-length", os.path.join(d, "at.npy"))
            self.assertEqual(r.returncode, 0, r.stderr)
            scale = np.load(f"{d}/k_scale.npy")
            self.assertEqual(scale.shape, (1, 2, 7, 2))
            dense = np.load(f"{d}/k.npy")[:, :, 6] * np.repeat(scale[:, :, 6], 32, axis=-1)
            self.assertLessEqual(np.abs(dense - np.load(os.path.join(d, "x1.npy"))[:, :, 0]).max(),
                                 0.51 * scale[:, :, 6].max())
            # --group 64 = E: still a scale per group, (B, Hkv, Lmax, 1); no channels at all: refused, not a crash.
            r = attnforge("quantize", "--values", x, f"--codes={d}/g.npy", f"--scale={d}/g_scale.npy", "--group", "64")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(np.load(f"{d}/g_scale.npy").shape, (1, 2, 7, 1))
            np.save(os.path.join(d, "empty.npy"), np.zeros((1, 2, 3, 0), np.float32))
            for zero in ([], [f"--zero={d}/z_zero.npy"]):
                r = attnforge("quantize", "--values", os.path.join(d, "empty.npy"), f"--codes={d}/z.npy",
                              f"--scale={d}/z_scale.npy", *zero)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("at least one channel", r.stderr)
            r = attnforge("quantize", "--values", x, f"--codes={d}/new.npy", f"--scale={d}/new_scale.npy", "--group",
                          "48")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--group 48 must divide the head width E = 64", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "new.npy")))

    def test_quantize_writes_keys_by_channel_decode_u8_kc128_reads(self):
        """`attnforge quantize --zero --open-block` makes uint8 keys by channel of blocks of 128 tokens (a prompt,
        then tokens into the same files, the open block's kept tokens in their own file): the codes equal one write of
        every token; `run decode_u8_kc128` over the files: kernel against the interpreter."""
        rng = np.random.default_rng(13)
        with tempfile.TemporaryDirectory() as d:
            p = {n: os.path.join(d, n + ".npy") for n in ("x", "x0", "x1", "at", "q", "kv_length")}
            x = rng.normal(size=(1, 2, 140, 64)).astype(np.float32)
            np.save(p["x"], x)
            np.save(p["x0"], x[:, :, :130])
            np.save(p["x1"], x[:, :, 130:])
            np.save(p["at"], np.array([130], np.int32))
            np.save(p["q"], rng.normal(size=(1, 4, 1, 64)).astype(np.float32))
            np.save(p["kv_length"], np.array([140], np.int32))
            k = [f"--codes={d}/k.npy", f"--scale={d}/k_scale.npy", f"--zero={d}/k_zero.npy",
                 f"--open-block={d}/k_open.npy"]
            r = attnforge("quantize", "--values", p["x0"], *k, "--lmax", "200")
            self.assertEqual(r.returncode, 0, r.stderr)
            r = attnforge("quantize", "--values", p["x1"], *k, "--kv-length", p["at"])
            self.assertEqual(r.returncode, 0, r.stderr)
            once = [f"--codes={d}/o.npy", f"--scale={d}/o_scale.npy", f"--zero={d}/o_zero.npy",
                    f"--open-block={d}/o_open.npy"]
            r = attnforge("quantize", "--values", p["x"], *once, "--lmax", "200")
            self.assertEqual(r.returncode, 0, r.stderr)
            for a, b in (("k", "o"), ("k_scale", "o_scale"), ("k_zero", "o_zero")):
                self.assertTrue(np.array_equal(np.load(f"{d}/{a}.npy"), np.load(f"{d}/{b}.npy")), a)
            self.assertEqual(np.load(f"{d}/k_scale.npy").shape, (1, 2, 2, 64))
            self.assertEqual(np.load(f"{d}/k_open.npy").shape, (1, 2, 128, 64))
            r = attnforge("quantize", "--values", p["x"], f"--codes={d}/v.npy", f"--scale={d}/v_scale.npy",
                          f"--zero={d}/v_zero.npy", "--lmax", "200")
            self.assertEqual(r.returncode, 0, r.stderr)
            inputs = [f"--input=q={p['q']}", f"--input=kv_length={p['kv_length']}", f"--input=k={d}/k.npy",
                      f"--input=k_scale={d}/k_scale.npy", f"--input=k_zero={d}/k_zero.npy", f"--input=v={d}/v.npy",
                      f"--input=v_scale={d}/v_scale.npy", f"--input=v_zero={d}/v_zero.npy"]
            self.assert_kernel_matches_interpreter("decode_u8_kc128", inputs, d)
            # Keys by channel take a zero point; an existing cache needs its open block's file.
            r = attnforge("quantize", "--values", p["x1"], f"--codes={d}/i.npy", f"--scale={d}/i_scale.npy",
                          f"--open-block={d}/i_open.npy")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--open-block is for uint8 keys by channel", r.stderr)
            r = attnforge("quantize", "--values", p["x1"], *k[:3], f"--open-block={d}/missing.npy", "--kv-length",
                          p["at"])
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("missing.npy", r.stderr)

    def test_storage_types_through_npy(self):
        """--dtype bf16: <f4 inputs rounded to nearest even, the kernel against the interpreter on the same
        rounded inputs within contract §5's bf16 bound; --dtype fp16 takes <f2 files; results are <f4."""
        rng = np.random.default_rng(5)
        with tempfile.TemporaryDirectory() as d:
            for dtype, file_dtype, bound in (("bf16", np.float32, 5e-3), ("fp16", np.float16, 2e-3)):
                for n, shape in (("q", (2, 2, 9, 64)), ("k", (2, 2, 33, 64)), ("v", (2, 2, 33, 64))):
                    np.save(os.path.join(d, f"{n}.npy"), rng.uniform(-3, 3, shape).astype(file_dtype))
                inputs = [f"--input={n}={d}/{n}.npy" for n in "qkv"]
                outs = {}
                for engine in ("kernel", "interpreter"):
                    out = os.path.join(d, f"{dtype}_{engine}.npy")
                    r = attnforge("run", "sdpa_causal", *inputs, "--output", out, "--engine", engine, "--dtype", dtype,
                                  "--attention-weights", out + ".w.npy")
                    self.assertEqual(r.returncode, 0, r.stderr)
                    outs[engine] = np.load(out)
                    self.assertEqual(outs[engine].dtype, np.float32)
                    self.assertEqual(np.load(out + ".w.npy").shape, (2, 2, 9, 33))
                ref = outs["interpreter"]
                self.assertLessEqual(np.abs(outs["kernel"] - ref).max(), bound * (1 + np.abs(ref).max()))
                # The kernel's output is stored in the type: each value one of it.
                if dtype == "fp16":
                    np.testing.assert_array_equal(outs["kernel"], outs["kernel"].astype(np.float16).astype(np.float32))
                else:
                    bits = outs["kernel"].view(np.uint32)
                    self.assertTrue(np.all(bits & 0xFFFF == 0), "bf16 values have no low 16 bits")
            # A type a variant has no kernel in, and one that is not a type.
            r = attnforge("run", "seed_attention", "--input", f"x={d}/q.npy", "--output", os.path.join(d, "o.npy"),
                          "--dtype", "fp16")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("has no kernel for its output in fp16", r.stderr)
            r = attnforge("run", "sdpa", *inputs, "--output", os.path.join(d, "o.npy"), "--dtype", "int8")
            self.assertEqual(r.returncode, 2, r.stderr)

    def test_threads_option_and_float64_input_warning(self):
        with tempfile.TemporaryDirectory() as d:
            rng = np.random.default_rng(1)
            for n in "qkv":
                np.save(os.path.join(d, f"{n}.npy"), rng.uniform(-1, 1, (1, 2, 4, 64)))  # float64
            out = os.path.join(d, "o.npy")
            r = attnforge("run", "sdpa", *[f"--input={n}={d}/{n}.npy" for n in "qkv"], "--output", out,
                          "--threads", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("float64", r.stderr)
            self.assertEqual(np.load(out).shape, (1, 2, 4, 64))
            # A warning and then an error: only the error, on one line (docs/contract.md §3).
            np.save(os.path.join(d, "v.npy"), rng.uniform(-1, 1, (1, 2, 5, 64)).astype(np.float32))
            r = attnforge("run", "sdpa", *[f"--input={n}={d}/{n}.npy" for n in "qkv"], "--output", out)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertNotIn("float64", r.stderr)

    def test_threads_must_be_positive_and_say_so(self):
        for command in (["run", "sdpa", "--input=q=q.npy", "--output", "o.npy"], ["bench", "sdpa"]):
            r = attnforge(*command, "--threads", "0")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--threads: must be a positive number, given 0", r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


class EmptyAndDegenerateTest(unittest.TestCase):
    """B = 0 or L = 0 gives an empty output (both engines); no keys at all (Lk = 0) gives zero rows."""

    def run_sdpa(self, q_shape, kv_shape, engine):
        with tempfile.TemporaryDirectory() as d:
            for n, shape in (("q", q_shape), ("k", kv_shape), ("v", kv_shape)):
                np.save(os.path.join(d, f"{n}.npy"), np.ones(shape, np.float32))
            out = os.path.join(d, "o.npy")
            r = attnforge("run", "sdpa", *[f"--input={n}={d}/{n}.npy" for n in "qkv"], "--output", out, "--engine", engine)
            self.assertEqual(r.returncode, 0, r.stderr)
            return np.load(out)

    def test_empty_batch_queries_and_keys(self):
        for engine in ("kernel", "interpreter"):
            with self.subTest(engine=engine):
                self.assertEqual(self.run_sdpa((0, 2, 4, 64), (0, 2, 5, 64), engine).shape, (0, 2, 4, 64))
                self.assertEqual(self.run_sdpa((1, 2, 0, 64), (1, 2, 5, 64), engine).shape, (1, 2, 0, 64))
                no_keys = self.run_sdpa((1, 2, 3, 64), (1, 2, 0, 64), engine)
                self.assertEqual(no_keys.shape, (1, 2, 3, 64))
                self.assertTrue((no_keys == 0).all())


class ErrorTest(unittest.TestCase):
    """Exit status 2, one line on stderr naming what was expected and given, no output file."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name
        self.out = os.path.join(self.d, "out.npy")
        rng = np.random.default_rng(3)
        for n, shape in (("q", (1, 2, 4, 64)), ("k", (1, 2, 5, 64)), ("v", (1, 2, 5, 64))):
            np.save(os.path.join(self.d, f"{n}.npy"), rng.uniform(-1, 1, shape).astype(np.float32))

    def tearDown(self):
        self.dir.cleanup()

    def inputs(self, **override):
        paths = {n: os.path.join(self.d, f"{n}.npy") for n in "qkv"}
        paths.update(override)
        return [f"--input={n}={p}" for n, p in paths.items() if p is not None]

    def assert_rejected(self, args, *fragments):
        r = attnforge(*args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(self.out), "an output file was written")
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for f in fragments:
            self.assertIn(f, r.stderr)

    def test_a_head_width_the_build_did_not_make(self):
        # sdpa's E is run-time, its kernels per head width: E = 48 is none of them (the interpreter takes it).
        for n in "qkv":
            np.save(os.path.join(self.d, f"{n}48.npy"), np.zeros((1, 2, 5, 48), np.float32))
        args = ["run", "sdpa", *self.inputs(**{n: os.path.join(self.d, f"{n}48.npy") for n in "qkv"})]
        self.assert_rejected([*args, "--output", self.out], "no float32 kernel for its output at head width E=48",
                             "this build made E = " + ", ".join(map(str, HEAD_WIDTHS)),
                             "-DATTNFORGE_HEAD_WIDTHS=" + ",".join(map(str, HEAD_WIDTHS + [48])))
        r = attnforge(*args, "--engine", "interpreter", "--output", self.out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(np.load(self.out).shape, (1, 2, 5, 48))
        os.remove(self.out)

    def test_unknown_variant(self):
        self.assert_rejected(["run", "no_such_variant", *self.inputs(), "--output", self.out],
                             "unknown variant 'no_such_variant'", "sdpa")

    def test_missing_input(self):
        self.assert_rejected(["run", "sdpa", *self.inputs(v=None), "--output", self.out],
                             "missing input 'v'", "(B=1, Hkv=2, L[kv]=5, E=64)")

    def test_extra_input(self):
        self.assert_rejected(["run", "sdpa", *self.inputs(), f"--input=bias={self.d}/q.npy", "--output", self.out],
                             "unexpected input 'bias'")

    def test_wrong_shape(self):
        np.save(os.path.join(self.d, "bad.npy"), np.zeros((1, 2, 5, 32), np.float32))
        self.assert_rejected(["run", "sdpa", *self.inputs(k=os.path.join(self.d, "bad.npy")), "--output", self.out],
                             "input 'k' must have shape (B=1, Hkv, L[kv], E=64)", "given (1, 2, 5, 32)")

    def test_wrong_dtype(self):
        np.save(os.path.join(self.d, "int.npy"), np.zeros((1, 2, 5, 64), np.int32))
        self.assert_rejected(["run", "sdpa", *self.inputs(k=os.path.join(self.d, "int.npy")), "--output", self.out],
                             "input 'k'", "must be float32 '<f4'", "given int32 '<i4'")

    def test_float_mask_is_the_wrong_dtype(self):
        x = np.zeros((1, 3, 512), np.float32)
        w = np.zeros((512, 512), np.float32)
        for n, v in (("x", x), ("w", w), ("m", np.zeros((1, 3), np.float32))):
            np.save(os.path.join(self.d, f"{n}.npy"), v)
        args = [f"--input={n}={self.d}/w.npy" for n in ("wq", "wk", "wv", "wo")]
        self.assert_rejected(["run", "mha_padding", f"--input=x={self.d}/x.npy", *args,
                              f"--input=key_padding_mask={self.d}/m.npy", "--output", self.out],
                             "key_padding_mask", "bool '|b1' (or uint8 '|u1')")

    def test_unreadable_files(self):
        self.assert_rejected(["run", "sdpa", *self.inputs(q=os.path.join(self.d, "absent.npy")), "--output", self.out],
                             "absent.npy", "cannot open")
        with open(os.path.join(self.d, "corrupt.npy"), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00garbage")
        self.assert_rejected(["run", "sdpa", *self.inputs(q=os.path.join(self.d, "corrupt.npy")), "--output", self.out],
                             "corrupt.npy")

    def write_header_only(self, name, shape_text):
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_text
        header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
        path = os.path.join(self.d, name)
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\0" * 64)
        return path

    def test_huge_negative_and_overflowing_declared_shapes(self):
        """Rejected from the header and the file size alone: nothing of the declared size is allocated."""
        cases = [("(1099511627776, 2, 4, 64)", "needs 2251799813685248 data bytes, the file has 64 (truncated)"),
                 ("(1, -2, 4, 64)", "shape entries must be non-negative integers"),
                 ("(4294967296, 4294967296, 4294967296, 64)", "too large (its byte size overflows)"),
                 ("(99999999999999999999999, 2)", "a shape entry overflows")]
        for shape, fragment in cases:
            with self.subTest(shape=shape):
                self.assert_rejected(["run", "sdpa", *self.inputs(q=self.write_header_only("h.npy", shape)),
                                      "--output", self.out], "input 'q'", fragment)

    def test_a_huge_size_with_no_elements_is_rejected_not_looped_over(self):
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 2, 0, 64), }"
        path = os.path.join(self.d, "empty_huge.npy")
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header + "\n").to_bytes(2, "little") + (header + "\n").encode())
        for engine in ("kernel", "interpreter"):
            self.assert_rejected(["run", "sdpa", *self.inputs(q=path, k=path, v=path), "--output", self.out,
                                  "--engine", engine], "input 'q'", "at most 2^31 - 1")

    def test_an_input_that_ends_while_it_is_read(self):
        """A pipe whose writer stops half-way: the file vanishes mid-read; a clear error, no output."""
        data = open(os.path.join(self.d, "q.npy"), "rb").read()
        fifo = os.path.join(self.d, "q_pipe.npy")
        os.mkfifo(fifo)

        def writer():
            with open(fifo, "wb") as f:
                f.write(data[: len(data) // 2])

        thread = threading.Thread(target=writer, daemon=True)  # daemon: never blocks the test run
        thread.start()
        self.assert_rejected(["run", "sdpa", *self.inputs(q=fifo), "--output", self.out], "q_pipe.npy", "truncated")
        thread.join(timeout=10)

    def test_bad_usage(self):
        self.assert_rejected(["run", "sdpa", *self.inputs(), "--output", self.out, "--engine", "gpu"], "engine")
        self.assert_rejected(["run", "sdpa", *self.inputs()], "--output")
        self.assert_rejected(["run", "sdpa", "--input", "q", "--output", self.out], "NAME=FILE.npy")
        # Two results into one file.
        self.assert_rejected(["run", "sdpa", *self.inputs(), "--output", self.out, "--logsumexp", self.out],
                             "--logsumexp and --output name the same file")
        lse = os.path.join(self.d, "lse.npy")
        self.assert_rejected(["run", "sdpa", *self.inputs(), "--output", self.out, "--attention-weights", lse,
                              "--logsumexp", lse], "--logsumexp and --attention-weights name the same file")
        self.assertFalse(os.path.exists(lse))

    def test_unwritable_output_is_status_2_and_leaves_nothing(self):
        out = os.path.join(self.d, "no_dir", "out.npy")
        r = attnforge("run", "sdpa", *self.inputs(), "--output", out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertFalse(os.path.exists(out))


class BenchTest(unittest.TestCase):
    """`attnforge bench --json`: the rows an orchestrator (bench/run) reads."""

    def rows(self, *extra):
        r = attnforge("bench", "sdpa", "--length", "40", "--heads", "2", "--threads", "1", "--no-interpreter",
                      "--repeats", "1", "--min-seconds", "0", "--json", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout[r.stdout.index("\n[") + 1:])  # the JSON follows the table

    def test_every_output_kernel_is_timed_and_the_rule_marked(self):
        rows = self.rows()
        # Every output kernel of sdpa in the registry: the list's two, and any tuned kernel of this machine.
        listed = json.loads(attnforge("list", "--json").stdout)
        sdpa = next(v for v in listed if v["variant"] == "sdpa")
        # sdpa's E is run-time: the kernels of the E benched (64, the default).
        expected = sorted(k["name"] for k in sdpa["kernels"]
                          if k["result"] == "output" and k["dtype"] == "float32" and k["head_width"] == 64)
        self.assertEqual(sorted(row["engine"] for row in rows), expected)
        self.assertEqual({part for row in rows for part in row["engine"].split("__")} & {"materialized", "streaming"},
                         {"materialized", "streaming"})
        self.assertEqual(sum(row["chosen_by_rule"] for row in rows), 1)
        for row in rows:
            self.assertGreater(row["ms"], 0)
            self.assertGreater(row["peak_gflops"], 0)
            # The read bandwidth measured in the same run, and the bytes every input and the output take.
            self.assertGreater(row["read_bandwidth_gbs"], 0)
            self.assertEqual(row["bytes"], 4 * (3 * 1 * 2 * 40 * 64 + 1 * 2 * 40 * 64))  # q, k, v, output
            self.assertAlmostEqual(row["gbs"], row["bytes"] / row["ms"] / 1e6, delta=1e-6 * row["gbs"])
            self.assertAlmostEqual(row["fraction_of_bandwidth"], row["gbs"] / row["read_bandwidth_gbs"], places=9)
            # Probed before the first timed call and after the calls; the fastest of 5 before them kept apart.
            self.assertGreaterEqual(row["read_bandwidth_passes"], 2)
            self.assertGreater(row["read_bandwidth_fastest_gbs"], 0)

    def test_the_bandwidth_is_probed_between_the_calls(self):
        # 4 ms calls (a 134 MB cache) for at least 0.12 s: slices of 50 ms, a probe pass before the first and
        # after each, so the % of bandwidth is of the same moments as the calls.
        r = attnforge("bench", "decode", "--heads", "8", "--batch", "1", "--lq", "1", "--lk", "32768", "--threads", "1",
                      "--chosen-only", "--no-interpreter", "--min-seconds", "0.12", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fastest of 5", r.stdout)
        self.assertIn("% bw: of the read bandwidth measured between the kernel's calls", r.stdout)
        (row,) = json.loads(r.stdout[r.stdout.index("\n[") + 1:])
        slices = math.ceil(0.12 / 0.05)
        # A slice ends once it passes 50 ms, so calls that overshoot it fit 0.12 s into two slices (6-14 ms calls on
        # a machine reading 22 GB/s): at least two, the first ending short of 0.12 s.
        self.assertGreaterEqual(row["read_bandwidth_passes"], 1 + 2)
        self.assertLessEqual(row["read_bandwidth_passes"], 2 + slices)  # not one per call
        self.assertAlmostEqual(row["fraction_of_bandwidth"], row["gbs"] / row["read_bandwidth_gbs"], places=9)

    def test_a_storage_type_times_its_own_kernels_and_counts_its_bytes(self):
        rows = self.rows("--dtype", "bf16")
        listed = json.loads(attnforge("list", "--json").stdout)
        sdpa = next(v for v in listed if v["variant"] == "sdpa")
        expected = sorted(k["name"] for k in sdpa["kernels"]
                          if k["result"] == "output" and k["dtype"] == "bf16" and k["head_width"] == 64)
        self.assertTrue(expected)
        self.assertEqual(sorted(row["engine"] for row in rows), expected)
        for row in rows:
            self.assertEqual(row["dtype"], "bf16")
            self.assertEqual(row["bytes"], 2 * (3 * 1 * 2 * 40 * 64 + 1 * 2 * 40 * 64))  # half of float32's
            # bf16 kernels are measured against the machine's bf16 peak: AMX tiles where the CPU has them, else the
            # dot-product peak (vdpbf16ps) where it has AVX512_BF16 on AMD's cores (twice the FMA peak; Intel's issue
            # it at half, and the kernels multiply with FMAs there), else the FMA peak.
            with open("/proc/cpuinfo") as f:
                flags = f.read()
            has_bf16, has_tiles = " avx512_bf16" in flags, " amx_bf16" in flags
            dot_pays = has_bf16 and "GenuineIntel" not in flags
            self.assertEqual(row["peak"], "bf16_tiles" if has_tiles else "bf16_dot_product" if dot_pays else "fma")
            if row["peak"] == "fma":
                self.assertEqual(row["peak_gflops"], row["fma_peak_gflops"])
            else:
                self.assertNotEqual(row["peak_gflops"], row["fma_peak_gflops"])
        for row in self.rows():
            self.assertEqual(row["peak"], "fma")

    def test_chosen_only_times_the_kernel_the_rule_picks(self):
        rows = self.rows("--chosen-only")
        self.assertEqual(len(rows), 1)
        self.assertTrue(rows[0]["chosen_by_rule"])
        self.assertTrue(rows[0]["engine"].startswith("sdpa__E64__materialized"))

    def test_given_inputs_replace_synthetic_ones(self):
        d = tempfile.mkdtemp()
        ids = np.repeat(np.arange(4, dtype=np.int32), 16)[None]  # 4 documents of 16 tokens
        np.save(os.path.join(d, "ids.npy"), ids)
        r = attnforge("bench", "document_attention", "--length", "64", "--heads", "2", "--threads", "1",
                      "--no-interpreter", "--repeats", "1", "--min-seconds", "0", "--json",
                      f"--input=document_ids={d}/ids.npy")
        self.assertEqual(r.returncode, 0, r.stderr)
        # A shape other than the sizes give: bad input, both shapes named.
        r = attnforge("bench", "document_attention", "--length", "32", "--threads", "1", "--no-interpreter",
                      f"--input=document_ids={d}/ids.npy")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("(1, 64)", r.stderr)
        self.assertIn("(1, 32)", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        # An input the variant does not take.
        r = attnforge("bench", "sdpa", "--length", "64", "--threads", "1", "--no-interpreter",
                      f"--input=document_ids={d}/ids.npy")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("unexpected input 'document_ids'", r.stderr)

    def test_negative_min_seconds_is_bad_usage(self):
        r = attnforge("bench", "sdpa", "--min-seconds", "-1")
        self.assertEqual(r.returncode, 2, r.stderr)  # bad usage (docs/cli.md), not a crash or a failure


if __name__ == "__main__":
    ATTNFORGE = sys.argv.pop(1)
    unittest.main(verbosity=2)
