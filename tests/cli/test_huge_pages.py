"""`attnforge` keeps its tensors in transparent huge pages (tools/attnforge/main.cpp restarts itself with
glibc.malloc.hugetlb=1), as NumPy keeps the peers' arrays: a decode cache streams at 28-31 GB/s through
2 MiB pages on one Zen 4 core and at 22 GB/s through 4 KiB pages (docs/performance.md, decode). Checked
through `attnforge bench --json`'s huge_page_bytes (the process's AnonHugePages once its inputs exist).
Not run under the sanitizers: their allocators are not glibc's malloc.

usage: test_huge_pages.py ATTNFORGE"""
import json
import os
import subprocess
import sys
import unittest

ATTNFORGE = None
CACHE_BYTES = 2 * 8 * 8192 * 64 * 4  # K and V of decode at B = 1, H = 8, Lk = 8192, E = 64, float32


def transparent_huge_pages():
    """The kernel's THP mode: "always", "madvise" or "never" (None where the kernel has no THP)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return None


def huge_page_bytes(env=None):
    r = subprocess.run([ATTNFORGE, "bench", "decode", "--heads", "8", "--batch", "1", "--lq", "1", "--lk", "8192",
                        "--threads", "1", "--no-interpreter", "--chosen-only", "--repeats", "1", "--min-seconds", "0",
                        "--json"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout[r.stdout.index("\n[") + 1:])
    assert len(rows) == 1, rows
    return rows[0]["huge_page_bytes"]


class HugePagesTest(unittest.TestCase):
    def setUp(self):
        if transparent_huge_pages() in (None, "never"):
            self.skipTest(f"transparent huge pages off here ({transparent_huge_pages()})")

    def test_the_cache_lies_in_huge_pages(self):
        env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
        got = huge_page_bytes(env)
        # Each tensor is its own mapping, not 2 MiB-aligned: all but its first and last partial huge page.
        self.assertGreaterEqual(got, CACHE_BYTES - 2 * 2 * 2**21, f"{got / 1e6:.1f} MB of {CACHE_BYTES / 1e6:.1f} MB")

    def test_a_tunable_the_user_set_is_kept(self):
        if transparent_huge_pages() != "madvise":
            self.skipTest("THP applies to every mapping here (\"always\"): the tunable changes nothing")
        env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=0")
        self.assertLess(huge_page_bytes(env), CACHE_BYTES / 4)


if __name__ == "__main__":
    ATTNFORGE = sys.argv.pop(1)
    unittest.main(verbosity=2)
