"""The decode GEMV (include/tl/cpu/gemm.h, gemm_f32_gemv: one row of C, B read in place) on B
pointers at every alignment within a cache line, for row blocks that take the wide-row path
(gemv_rows, N > 256) and the strip path (gemv_strip), with k not a multiple of the 8 rows per pass:
the prefetches of each row's last line (rows not 64-byte aligned) must not change a value; with both
hosts' tunings (-DTL_CPU_TUNE_INTEL=1: no software prefetch). Checked against numpy in float64 on
random inputs."""
import os
import sys

import numpy as np
import pytest

import tilelang

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


def at_offset(shape, offset_floats, rng):
    """A C-contiguous float32 array of `shape` whose data start `offset_floats` floats past a
    64-byte boundary, filled with uniform [-1, 1) values."""
    n = int(np.prod(shape))
    raw = np.empty(n + 32, np.float32)
    start = (-raw.ctypes.data // 4) % 16 + offset_floats
    x = raw[start:start + n].reshape(shape)
    x[...] = rng.uniform(-1, 1, shape).astype(np.float32)
    assert x.ctypes.data % 64 == 4 * offset_floats
    return x


# N, K, block_N, block_K: 512- and 1024-column blocks take gemv_rows, 128 and 256 gemv_strip
CASES = [(1024, 300, 512, 100), (2048, 515, 1024, 515), (512, 77, 128, 77), (768, 260, 256, 52)]


@pytest.mark.parametrize("tune", ["host", "intel"])
@pytest.mark.parametrize("offset", [0, 1, 4, 15])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"N{c[0]}-K{c[1]}-bn{c[2]}-bk{c[3]}")
def test_decode_gemv_matches_numpy_at_any_alignment(case, offset, tune, rng):
    N, K, bn, bk = case
    flags = ["-DTL_CPU_TUNE_INTEL=1"] if tune == "intel" else None
    kernel = tilelang.compile(zoo.gemm(1, N, K, 1, bn, bk, "float32", "float32", "float32"), target="cpu",
                              compile_flags=flags)
    a = at_offset((1, K), (offset * 3) % 16, rng)
    b = at_offset((K, N), offset, rng)
    c = np.zeros((1, N), np.float32)
    kernel(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=0, atol=2e-6 * K)
