#!/usr/bin/env python3
"""bench/report.py on made-up rows: best-peer ratios, geometric mean, targets, Markdown (no peers needed); the
timing protocol's pause (bench/timing.py).

Usage: test_report.py PATH/TO/bench   (run by CTest)
"""
import sys
import unittest

report = None


def row(variant, shape, threads, impl, ms, frac, ok=True):
    return {"variant": variant, "shape": shape, "threads": threads, "implementation": impl, "ms": ms,
            "gflops": 1.0, "peak_gflops": 100.0, "fraction_of_peak": frac, "check_ok": ok, "samples_ms": [ms]}


ROWS = [
    row("sdpa", "B=1 L=2048", 1, "attnforge", 10.0, 0.80, None),
    row("sdpa", "B=1 L=2048", 1, "PyTorch SDPA", 20.0, 0.40),
    row("sdpa", "B=1 L=2048", 1, "ONNX Runtime", 5.0, 1.60, False),  # wrong output: never the best peer
    row("sdpa", "B=1 L=2048", 2, "attnforge", 5.0, 0.80, None),
    row("sdpa", "B=1 L=2048", 2, "PyTorch SDPA", 5.0, 0.80),
    row("sdpa_causal", "B=1 L=2048", 1, "attnforge", 7.0, 1.14, None),
    row("sdpa_causal", "B=1 L=2048", 1, "PyTorch SDPA", 14.0, 0.57),
]


class ReportTest(unittest.TestCase):
    def test_best_peer_ignores_failed_checks(self):
        s = report.speedups(ROWS)
        self.assertAlmostEqual(s[("sdpa", "B=1 L=2048", 1)], 2.0)
        self.assertAlmostEqual(s[("sdpa", "B=1 L=2048", 2)], 1.0)

    def test_targets(self):
        t = {name: (ok, measured) for name, ok, measured in report.targets(ROWS, None)}
        self.assertTrue(t["sdpa B=1 L=2048 1 thr ≥ 75% of peak"][0])
        self.assertFalse(t["sdpa_causal B=1 L=2048 1 thr ≤ 0.6× sdpa"][0])  # 7 / 10 = 0.70
        self.assertTrue(t["sdpa B=1 L=2048 2 threads ≥ 1.8× 1 thread"][0])  # 10 / 5 = 2.0
        self.assertFalse(t["faster than every peer on every cell"][0])  # a tie with PyTorch at 2 threads
        # (2·1·2)^(1/3); at 100% of the peak: (200·100·399.8)^(1/3), from test_speed_of_light
        self.assertEqual(t["geometric-mean speedup over the best peer ≥ 1.5×"][1],
                         "1.59× (at 100% of the FMA peak on every cell: at most 199.97×)")

    def test_necessary_flops_drop_the_products_above_the_diagonal(self):
        self.assertEqual(report.necessary_flops("sdpa", "B=1 L=4 H=8 E=64", 1000.0), 1000.0)
        self.assertAlmostEqual(report.necessary_flops("sdpa_causal", "B=1 L=4 H=8 E=64", 1000.0), 625.0)  # 10 of 16 pairs
        # mha B=1 L=4 D=2: projections 8·4·2² = 128 (kept whole), attention 4·4²·2 = 128 (10 of 16 pairs kept)
        self.assertAlmostEqual(report.necessary_flops("mha_causal", "B=1 L=4 D=2", 256.0), 128.0 + 80.0)

    def test_speed_of_light(self):
        # gflops 1 and ms m mean m·1e6 dense flops; at the 100 GFLOP/s peak they take m / 100 ms
        s = report.speed_of_light(ROWS)
        self.assertAlmostEqual(s[("sdpa", "B=1 L=2048", 1)], 20.0 / 0.1)  # the failed peer is not the best
        self.assertAlmostEqual(s[("sdpa", "B=1 L=2048", 2)], 5.0 / 0.05)
        self.assertAlmostEqual(s[("sdpa_causal", "B=1 L=2048", 1)], 14.0 / (0.07 * 2049 / 4096))

    def test_markdown_marks_failed_checks_and_ratios(self):
        md = report.markdown({"date": "d", "command": "c", "protocol": "p", "rows": ROWS,
                              "machine": {"cpu": "cpu", "cores": 2}, "versions": {"PyTorch": "x"}})
        self.assertIn("**FAILED**", md)
        self.assertIn("**2.00×**", md)
        self.assertIn("| target | met | measured |", md)

    def test_summary_has_one_line_per_cell_with_each_peer(self):
        lines = report.summary(ROWS).splitlines()
        self.assertEqual(len(lines), 2 + 3)  # header, rule, three cells
        self.assertIn("| sdpa | B=1 L=2048 | 1 | 10.00 | 1.0 | 80.0 | 20.00 | 5.00 ✗ | — | 2.00× |", lines)

    def test_python_rows_are_ours_not_a_peer(self):
        rows = ROWS + [row("sdpa", "B=1 L=2048", 1, "attnforge (Python)", 8.0, 1.0),  # faster than the C++ row
                       row("sdpa", "B=1 L=128", 1, "attnforge", 0.40, 0.5, None),
                       row("sdpa", "B=1 L=128", 1, "attnforge (Python)", 0.42, 0.5),
                       row("sdpa", "B=1 L=128", 1, "PyTorch SDPA", 0.84, 0.25)]
        s = report.speedups(rows)
        self.assertAlmostEqual(s[("sdpa", "B=1 L=2048", 1)], 2.0)  # still PyTorch ÷ ours: not 8 ÷ 10
        table = report.python_call_summary(rows)
        self.assertIn("best peer ÷ ours > 1 on 2 of 2 cells", table)
        self.assertIn("sdpa L = 128: 1.050–1.050×", table)  # the smallest length's Python ÷ C++
        self.assertIn("| sdpa | B=1 L=128 | 1 | 0.40 | 0.42 | 1.050 | 2.00× |", table)
        self.assertIn("| sdpa | B=1 L=2048 | 1 | 10.00 | 8.00 | 0.800 | 2.50× |", table)
        self.assertEqual(report.python_call_summary(ROWS), "")  # no Python rows: no section

    def test_flex_tables(self):
        def flex(variant, shape, impl, ms, live=None, sweep=False, **extra):
            r = row(variant, shape, 1, impl, ms, 0.5)
            r.update(live_fraction=live, sweep=sweep, **extra)
            return r
        rows = [flex("document_attention", "B=1 H=8 L=512 docs=4", "attnforge", 2.0, 0.25),
                flex("document_attention", "B=1 H=8 L=512 docs=4", "FlexAttention", 3.0, 0.25, compile_s=5.0),
                flex("document_attention", "B=1 H=8 L=512 docs=4", "OpenVINO SDPA (dense mask)", 4.0, 0.25),
                flex("document_attention", "B=1 H=8 L=512 docs=8", "attnforge", 1.0, 0.125, True),
                flex("document_attention", "B=1 H=8 L=512 docs=8", "FlexAttention", 2.0, 0.125, True)]
        # The main table: best peer ÷ ours against the fastest peer, the sweep's cell left out.
        lines = report.flex_summary(rows).splitlines()
        self.assertIn("| document_attention | B=1 H=8 L=512 docs=4 | 1 | 0.250 | 2.00 | 3.00 | — | 4.00 | 5.0 | 1.50× |",
                      lines)
        self.assertFalse(any("docs=8" in line for line in lines))
        # The sweep: ms ÷ live fraction, and FlexAttention ÷ ours, per number of documents.
        sweep = report.flex_documents(rows).splitlines()
        self.assertIn("| 1 | 4 | 0.250 | 2.00 | 8.00 | 3.00 | 12.00 | 1.50× |", sweep)
        self.assertIn("| 1 | 8 | 0.125 | 1.00 | 8.00 | 2.00 | 16.00 | 2.00× |", sweep)
        self.assertEqual(report.summary(rows).count("document_attention"), 0)  # flex rows stay out of the prefill table

    def test_bf16_table_and_targets(self):
        def bf16(impl, ms, frac, dtype, ok=True):
            return {**row("sdpa", "B=1 L=2048 H=8 E=64", 1, impl, ms, frac, ok), "grid": "bf16", "dtype": dtype}
        rows = [bf16("attnforge", 50.0, 0.80, "bf16"), bf16("attnforge float32", 90.0, 0.85, "float32"),
                bf16("OpenVINO SDPA f32", 95.0, 0.4, "float32"), bf16("OpenVINO SDPA bf16", 55.0, 0.4, "bf16"),
                bf16("PyTorch SDPA bf16", 40.0, 0.5, "bf16", ok=False),  # a failed check is never the best peer
                bf16("attnforge fp16", 88.0, 0.4, "fp16"), bf16("ONNX Runtime Attention fp16", 99.0, 0.4, "fp16")]
        lines = report.bf16_summary(rows).splitlines()
        self.assertIn("| sdpa | B=1 L=2048 H=8 E=64 | 1 | 50.00 | 80.0 | 90.00 | 1.80× | 95.00 | 55.00 | 40.00 ✗ | 1.10× "
                      "| 88.00 | 99.00 |", lines)
        self.assertIn("speed-up >= 1.7: 1 of 1 cells; peak >= 75%: 1 of 1 cells; faster than bf16 peers: 1 of 1 cells",
                      lines[-1])
        # bf16 rows stay out of the prefill tables and targets, in their own section.
        md = report.markdown({"date": "d", "machine": {"cpu": "c", "cores": 2}, "versions": {}, "command": "x",
                              "protocol": "p", "rows": ROWS + rows, "checks": []})
        before, after = md.split("bf16 storage", 1)
        self.assertNotIn("H=8 E=64", before)  # not in the prefill summary, targets or table
        self.assertIn("1.10×", after)


class TimingTest(unittest.TestCase):
    def test_a_batch_starts_after_the_pause(self):
        # Another implementation's idle threads may still spin (ONNX Runtime's ~50 ms): no call before the pause.
        import timing
        events, sleep = [], timing.time.sleep
        timing.time.sleep = lambda s: events.append(("sleep", s))
        try:
            timing.time_batch(lambda: events.append("call"), min_calls=3, min_seconds=0)
        finally:
            timing.time.sleep = sleep
        self.assertEqual(events[0], ("sleep", timing.SETTLE_SECONDS))
        self.assertGreaterEqual(timing.SETTLE_SECONDS, 0.1)  # twice the longest spin measured
        self.assertEqual(events[1:], ["call"] * 4)  # the warm-up, then 3 timed


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import report as report_module
    report = report_module
    unittest.main(verbosity=2)
