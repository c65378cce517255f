#!/usr/bin/env python3
"""`attnforge viz`: the PNG decodes, its cells show the attention weights `attnforge run` writes (through
the colour map the command reports), the colour bar runs over the scale, labels and binning follow the
sizes, the text statistics are right, and bad input gets exit status 2.

The PNG is decoded here with zlib alone (8-bit RGB/RGBA, the five PNG filters), independently of the
cairo that wrote it.

Usage: test_viz.py PATH/TO/attnforge
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

import numpy as np

ATTNFORGE = sys.argv.pop(1) if len(sys.argv) > 1 else "attnforge"


def decode_png(path):
    """(height, width, 3) uint8 RGB of an 8-bit, non-interlaced RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        assert zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0], "bad CRC"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    out = np.zeros((height, stride), np.int32)
    prev = np.zeros(stride, np.int32)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        cur = np.zeros(stride, np.int32)
        for x in range(stride):
            a = cur[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if kind == 0:
                p = 0
            elif kind == 1:
                p = a
            elif kind == 2:
                p = b
            elif kind == 3:
                p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + p) & 0xFF
        out[y], prev = cur, cur
    return out.reshape(height, width, channels)[:, :, :3].astype(np.uint8)


def attnforge(*args):
    return subprocess.run([ATTNFORGE, *args], capture_output=True, text=True)


class VizTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        rng = np.random.default_rng(3)
        cls.inputs = []
        for name in "qkv":
            path = os.path.join(cls.tmp.name, f"{name}.npy")
            np.save(path, rng.uniform(-2, 2, (2, 3, 7, 64)).astype(np.float32))  # B=2, H=3, L=7
            cls.inputs += ["--input", f"{name}={path}"]
        cls.tokens = os.path.join(cls.tmp.name, "tokens.txt")
        with open(cls.tokens, "w") as f:
            f.write("\n".join(["The", "cat", "sat", "on", "the", "warm", "mat"]) + "\n")
        weights = os.path.join(cls.tmp.name, "w.npy")
        r = attnforge("run", "sdpa_causal", *cls.inputs, "--output", os.path.join(cls.tmp.name, "o.npy"),
                      "--attention-weights", weights)
        assert r.returncode == 0, r.stderr
        cls.weights = np.load(weights)  # (2, 3, 7, 7)

    def viz(self, *extra, variant="sdpa_causal", inputs=None):
        png = os.path.join(self.tmp.name, "viz.png")
        r = attnforge("viz", variant, *(inputs or self.inputs), "--png", png, "--json", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout), decode_png(png)

    def weight_of_pixel(self, rgb, colormap, vmax):
        distances = ((np.asarray(colormap, np.int32) - np.asarray(rgb, np.int32)) ** 2).sum(axis=1)
        return int(np.argmin(distances)) / 255 * vmax, int(distances.min())

    def test_pixels_follow_the_weights_of_every_head(self):
        layout, image = self.viz("--batch", "1", "--tokens", self.tokens)
        self.assertEqual(image.shape[:2], (layout["height"], layout["width"]))
        self.assertEqual(layout["heads"], [0, 1, 2])
        w = self.weights[1]
        self.assertAlmostEqual(layout["vmax"], float(w.max()), places=6)
        half = layout["cell"] // 2
        for p, head in enumerate(layout["heads"]):
            origin = layout["panels"][p]
            for i in range(7):
                for j in range(7):
                    rgb = image[origin["y"] + i * layout["cell"] + half, origin["x"] + j * layout["cell"] + half]
                    value, distance = self.weight_of_pixel(rgb, layout["colormap"], layout["vmax"])
                    self.assertLessEqual(distance, 3, f"head {head} cell ({i}, {j}) is not a colour of the map")
                    self.assertLessEqual(abs(value - w[head, i, j]), layout["vmax"] / 255 + 1e-6, (head, i, j))
        bar = layout["colorbar"]
        x = bar["x"] + bar["width"] // 2
        self.assertEqual(list(image[bar["y"], x]), layout["colormap"][255])
        self.assertEqual(list(image[bar["y"] + bar["height"] - 1, x]), layout["colormap"][0])

    def test_rows_report_entropy_and_top_keys(self):
        layout, _ = self.viz("--batch", "0", "--head", "2", "--top-k", "2")
        self.assertEqual(layout["heads"], [2])
        self.assertEqual(len(layout["rows"]), 7)
        w = self.weights[0, 2].astype(np.float64)
        for row in layout["rows"]:
            p = w[row["query"]]
            nz = p[p > 0]
            self.assertAlmostEqual(row["entropy"], float(-(nz * np.log(nz)).sum()), places=5)
            expected = sorted(range(7), key=lambda j: (-p[j], j))[:2]
            expected = [j for j in expected if p[j] > 0]
            self.assertEqual([t["key"] for t in row["top"]], expected)
            self.assertTrue(all(t["key"] <= row["query"] for t in row["top"]))  # causal: no future key

    def test_text_output_names_tokens(self):
        png = os.path.join(self.tmp.name, "text.png")
        r = attnforge("viz", "sdpa_causal", *self.inputs, "--png", png, "--tokens", self.tokens, "--head", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("head 0 query 'The': entropy 0.000 nats; top 1: 'The' 1.000", r.stdout)
        self.assertIn("query 'mat'", r.stdout)

    def test_long_rows_are_binned_by_their_maximum(self):
        rng = np.random.default_rng(5)
        inputs = []
        for name in "qkv":
            path = os.path.join(self.tmp.name, f"long_{name}.npy")
            np.save(path, (rng.uniform(-3, 3, (1, 1, 900, 64))).astype(np.float32))
            inputs += ["--input", f"{name}={path}"]
        weights = os.path.join(self.tmp.name, "long_w.npy")
        r = attnforge("run", "sdpa", *inputs, "--output", os.path.join(self.tmp.name, "long_o.npy"),
                      "--attention-weights", weights)
        self.assertEqual(r.returncode, 0, r.stderr)
        w = np.load(weights)[0, 0]
        layout, image = self.viz(variant="sdpa", inputs=inputs)
        self.assertEqual((layout["row_bin"], layout["col_bin"]), (3, 3))
        origin, cell = layout["panels"][0], layout["cell"]
        for r_, c_ in [(0, 0), (17, 150), (299, 299), (120, 7)]:
            rgb = image[origin["y"] + r_ * cell, origin["x"] + c_ * cell]
            value, _ = self.weight_of_pixel(rgb, layout["colormap"], layout["vmax"])
            expected = w[3 * r_:3 * r_ + 3, 3 * c_:3 * c_ + 3].max()
            self.assertLessEqual(abs(value - expected), layout["vmax"] / 255 + 1e-6, (r_, c_))

    def test_bad_input_exits_2_with_a_message(self):
        png = os.path.join(self.tmp.name, "bad.png")
        short = os.path.join(self.tmp.name, "short.txt")
        with open(short, "w") as f:
            f.write("a\nb\n")
        cases = [
            (["--head", "3"], "--head must be in [0, 3)"),
            (["--batch", "2"], "--batch must be in [0, 2)"),
            (["--tokens", short], "one line per query and key (7), given 2"),
            (["--tokens", os.path.join(self.tmp.name, "missing.txt")], "cannot read the token file"),
        ]
        for extra, message in cases:
            with self.subTest(extra=extra):
                r = attnforge("viz", "sdpa_causal", *self.inputs, "--png", png, *extra)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(png))
        r = attnforge("viz", "no_such_variant", *self.inputs, "--png", png)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown variant", r.stderr)
        # An unwritable PNG is bad usage, exit 2 and one line, as `run`'s unwritable --output.
        unwritable = os.path.join(self.tmp.name, "no_such_dir", "out.png")
        r = attnforge("viz", "sdpa_causal", *self.inputs, "--png", unwritable)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cannot write the PNG", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
