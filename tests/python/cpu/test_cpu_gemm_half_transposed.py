"""float16 and bfloat16 T.gemm with a transposed operand on cpu (B as [N, K]: attention's Q K^T). The
packing converts each row's run of k (vcvtph2ps; bfloat16 by a shift) before transposing blocks of it
into the column panels (include/tl/cpu/gemm.h, pack_b; bfloat16 takes that path where the CPU has no
AVX512-BF16 / AMX, as this test machine may not). Checked against numpy in float64 on random inputs, over tile
shapes with N not a multiple of 8 and of the panel width, k tiles longer than one conversion run
(256) and odd k, with the tiles read in place (forwarded) and through shared copies."""
import os
import sys

import numpy as np
import pytest

import tilelang

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


@pytest.mark.parametrize("M,N,K,bm,bn,bk", [
    (128, 128, 128, 64, 64, 128),   # attention's 128-wide head dim
    (64, 100, 96, 32, 50, 48),      # N not a multiple of 8 or of the panel width
    (32, 48, 640, 32, 48, 320),     # k tile longer than one conversion run
    (40, 24, 37, 40, 24, 37),       # odd k, a single tile
])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_gemm_transposed_b_matches_numpy(M, N, K, bm, bn, bk, forward, dtype, rng):
    import ml_dtypes
    npdt = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    prog = zoo.gemm(M, N, K, bm, bn, bk, dtype, "float32", "float32", trans_B=True)
    cfg = {} if forward else {"tl.disable_cpu_gemm_forwarding": True}
    kernel = tilelang.compile(prog, target="cpu", pass_configs=cfg)
    a = rng.uniform(-1, 1, (M, K)).astype(npdt)
    b = rng.uniform(-1, 1, (N, K)).astype(npdt)
    # a subnormal and a magnitude near the largest
    b[0, 0], b[-1, -1] = (6.0e-8, -65504.0) if dtype == "float16" else (1.0e-39, -3.0e38)
    c = np.zeros((M, N), np.float32)
    kernel(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-6, atol=2e-6 * K)
