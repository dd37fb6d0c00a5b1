"""cuda: T.reduce_max / reduce_min / reduce_absmax with nan_propagate=True (tl::MaxOpNan /
MinOpNan across threads, NaN-propagating max / min inside a thread) and `batch=`, compiled for
sm_80 / sm_90a with NVRTC and run on the cuda emulator against numpy in float64."""
import numpy as np
import pytest

import tilelang.language as T
from cuda_util import COMPILE_ARCHS, EmuRunner, build, requires_nvrtc


def reduce_kernel(M, N, op, src_scope, threads, nan_propagate, dtype="float32", batch=1):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=threads):
            src = T.alloc_fragment((M, N), dtype) if src_scope == "fragment" else T.alloc_shared((M, N), dtype)
            dst = T.alloc_fragment((M,), dtype)
            T.copy(A, src)
            kw = {"nan_propagate": True} if nan_propagate else {}
            getattr(T, f"reduce_{op}")(src, dst, dim=1, batch=batch, **kw)
            T.copy(dst, B)

    return main


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_nan_propagate_compiles(dtype, arch):
    r = build(reduce_kernel(128, 128, "max", "fragment", 256, True, dtype), arch)
    assert r["cubin"][:4] == b"\x7fELF"
    assert "tl::MaxOpNan" in r["source"]


@pytest.mark.parametrize("op", ["max", "min", "absmax"])
@pytest.mark.parametrize("src_scope, threads", [("fragment", 256), ("fragment", 32), ("shared", 128)])
def test_nan_propagate_on_emulator(op, src_scope, threads):
    rng = np.random.default_rng(3)
    M, N = 64, 128
    a = rng.standard_normal((M, N)).astype(np.float32)
    nan_rows = [3, 10, 20]
    a[3, 7] = a[10, N - 1] = a[20, 0] = np.nan
    for prop in (True, False):
        r = EmuRunner(reduce_kernel(M, N, op, src_scope, threads, prop))
        out = r(a, np.zeros(M, np.float32))[1]
        assert r.report["races"] == []
        x = a.astype(np.float64)
        if op == "absmax":
            x = np.abs(x)
        f = np.nanmax if op != "min" else np.nanmin
        ref = f(x, axis=1)
        if prop:
            ref[nan_rows] = np.nan
        np.testing.assert_array_equal(out, ref.astype(np.float32))


def test_batch_on_emulator():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((128, 64)).astype(np.float32)
    r = EmuRunner(reduce_kernel(128, 64, "sum", "fragment", 256, False, batch=4))
    out = r(a, np.zeros(128, np.float32))[1]
    np.testing.assert_allclose(out, a.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
