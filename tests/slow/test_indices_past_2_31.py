"""Slow tier (make test runs it after the main tiers): a kernel over more than 2^31 elements runs
correctly on cpu. Needs about 6.5 GiB of free memory (three 2 GiB int8 tensors plus checking in
64 MiB chunks); takes ~15 s on 2 cores. The same on a GPU: tests/python/cuda/test_large_indices_gpu.py.

Regression test of issue 11 (5): this add returned in 0.16 s with every element wrong."""
import os
import sys

import numpy as np
import pytest

import tilelang

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "e2e"))
from test_large_indices import BIG, add_1d  # noqa: E402

NEEDS_GIB = 6.5


def _available_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2 ** 20
    return 0.0


def _require_memory():
    have = _available_gib()
    if have >= NEEDS_GIB:
        return
    msg = f"needs {NEEDS_GIB} GiB of free memory, {have:.1f} GiB available"
    if os.environ.get("TL_SLOW_TESTS_STRICT"):
        pytest.fail(msg + " (TL_SLOW_TESTS_STRICT is set: make test's slow tier must run)")
    pytest.skip(msg)


def _random_int8(n, rng, chunk=1 << 26):
    out = np.empty(n, np.int8)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        out[s:e] = np.frombuffer(rng.bytes(e - s), np.int8)
    return out


def test_cpu_add_past_2_31_elements():
    _require_memory()
    rng = np.random.default_rng(31)
    k = tilelang.compile(add_1d(BIG), out_idx=[2], target="cpu")
    a = _random_int8(BIG, rng)
    b = _random_int8(BIG, rng)
    c = k(a, b)
    assert c.shape == (BIG,) and c.dtype == np.int8
    chunk = 1 << 26
    for s in range(0, BIG, chunk):
        e = min(BIG, s + chunk)
        want = (a[s:e].astype(np.int16) + b[s:e]).astype(np.int8)  # int8 addition wraps
        bad = np.flatnonzero(c[s:e] != want)
        assert bad.size == 0, f"{bad.size} wrong elements in [{s}, {e}), first at {s + bad[0]}"
