"""8-bit atomics on cuda (include/tl/cuda/atomic.h): T.atomic_add / atomic_max / atomic_min on
int8, uint8, float8_e4m3 and float8_e5m2 elements. There is no native 8-bit atomic; the header
compare-and-swaps the enclosing 32-bit word. Before, these kernels failed in NVRTC ("no instance
of overloaded function tl::atomic_add"). Compile-only for sm_80 and sm_90a (CI, NVRTC), and run on
a GPU against numpy: four accumulators sharing one 32-bit word, so neighbouring bytes are updated
concurrently and a lost update or a clobbered neighbour shows."""
import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from cuda_util import COMPILE_ARCHS, Runner, build, requires_gpu, requires_nvrtc

N = 256
DTYPES = {"int8": np.int8, "uint8": np.uint8, "float8_e4m3": ml_dtypes.float8_e4m3fn,
          "float8_e5m2": ml_dtypes.float8_e5m2}
OPS = ["atomic_add", "atomic_max", "atomic_min"]


def kernel(dtype, op):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((4,), dtype)):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(128):
                if op == "atomic_add":
                    T.atomic_add(B[i % 4], A[bx * 128 + i])
                elif op == "atomic_max":
                    T.atomic_max(B[i % 4], A[bx * 128 + i])
                else:
                    T.atomic_min(B[i % 4], A[bx * 128 + i])
    return main


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_8bit_atomics_compile(arch, dtype):
    for op in OPS:
        built = build(kernel(dtype, op), arch)
        assert "tl::" + op in built["source"]


def inputs(dtype, op, rng):
    if dtype in ("int8", "uint8"):
        info = np.iinfo(DTYPES[dtype])
        a = rng.integers(info.min, info.max + 1, N).astype(DTYPES[dtype])  # adds wrap around
        b = rng.integers(info.min, info.max + 1, 4).astype(DTYPES[dtype])
    elif op == "atomic_add":
        # Every partial sum exactly representable (also with e5m2's two mantissa bits), so the
        # result does not depend on the order: per accumulator 64 addends, 1 to 8 of them 0.25 at
        # random places, the rest 0; start 0.
        a = np.zeros(N, np.float64)
        for j in range(4):
            k = int(rng.integers(1, 9))
            a[rng.choice(np.arange(j, N, 4), k, replace=False)] = 0.25
        a, b = a.astype(DTYPES[dtype]), np.zeros(4, DTYPES[dtype])
    else:
        a = rng.standard_normal(N).astype(DTYPES[dtype])
        b = rng.standard_normal(4).astype(DTYPES[dtype])
    return a, b


def reference(dtype, op, a, b):
    ref = b.copy()
    for j in range(4):
        vals = a[j::4]
        if op == "atomic_add":
            if dtype in ("int8", "uint8"):
                ref[j] = (int(b[j]) + vals.astype(np.int64).sum()) % 256 if dtype == "uint8" else \
                    np.int64(int(b[j]) + vals.astype(np.int64).sum()).astype(np.int8)
            else:
                ref[j] = float(b[j]) + vals.astype(np.float64).sum()
        elif op == "atomic_max":
            ref[j] = max(b[j].astype(np.float64), vals.astype(np.float64).max())
        else:
            ref[j] = min(b[j].astype(np.float64), vals.astype(np.float64).min())
    return ref


@requires_gpu
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_8bit_atomics_on_gpu(dtype, op):
    rng = np.random.default_rng(hash((dtype, op)) % 2**32)
    a, b = inputs(dtype, op, rng)
    got = Runner(kernel(dtype, op))(a, b)[1]
    want = reference(dtype, op, a, b)
    np.testing.assert_array_equal(got.view(np.uint8), want.astype(DTYPES[dtype]).view(np.uint8))


def test_8bit_atomics_on_cpu_match_the_same_reference():
    """The cpu target already had these; the same reference keeps both targets to one meaning."""
    rng = np.random.default_rng(7)
    for dtype in DTYPES:
        for op in OPS:
            a, b = inputs(dtype, op, rng)
            k = tilelang.compile(kernel(dtype, op), target="cpu")
            b_got = b.copy()
            k(a, b_got)
            want = reference(dtype, op, a, b)
            np.testing.assert_array_equal(b_got.view(np.uint8), want.astype(DTYPES[dtype]).view(np.uint8),
                                          err_msg=f"{dtype} {op}")
