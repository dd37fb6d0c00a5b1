"""cuda: T.atomic_addx2 / T.atomic_addx4 with return_prev=True (each lane an atomicAdd returning
its old value). Compiled for sm_80 / sm_90a with NVRTC and run on the cuda emulator against numpy
(no GPU needed)."""
import numpy as np
import pytest

import tilelang.language as T
from cuda_util import COMPILE_ARCHS, EmuRunner, build, requires_nvrtc


def addxn_prev(n, blocks, dtype):
    add = T.atomic_addx2 if n == 2 else T.atomic_addx4

    @T.prim_func
    def main(Dst: T.Tensor((n,), dtype), Val: T.Tensor((blocks, n), dtype), Prev: T.Tensor((blocks, n), dtype)):
        with T.Kernel(blocks, threads=32) as b:
            Prev[b, 0:n] = add(Dst[0:n], Val[b, 0:n], return_prev=True)

    return main


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("n, dtype", [(2, "float32"), (4, "float32"), (2, "float16"), (4, "bfloat16")])
def test_addxn_return_prev_compiles(n, dtype, arch):
    r = build(addxn_prev(n, 4, dtype), arch)
    assert r["cubin"][:4] == b"\x7fELF"


@pytest.mark.parametrize("n", [2, 4])
def test_addxn_return_prev_on_emulator(n):
    # One block: 32 threads each add once (every thread runs the statement), so the old values
    # are dst0 + k * val for k = 0..31 in some order.
    rng = np.random.default_rng(n)
    dst0 = rng.integers(-8, 8, n).astype(np.float32)
    val = rng.integers(1, 8, (1, n)).astype(np.float32)
    r = EmuRunner(addxn_prev(n, 1, "float32"))
    dst, _, prev = r(dst0, val, np.zeros((1, n), np.float32))
    np.testing.assert_array_equal(dst, dst0 + 32 * val[0])
    for lane in range(n):
        assert prev[0, lane] in set((dst0[lane] + np.arange(32) * val[0, lane]).tolist())
