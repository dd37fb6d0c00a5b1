"""T.annotate_safe_value on the cuda lowering (tests/compat/test_lang_safe_value.py), run on the
cuda emulator (no GPU) against numpy: element-wise, vector, cp.async (T.Pipelined) and fragment
copies fill out-of-bounds reads with the annotated value; NVRTC compiles them (compile only)."""
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the compat module hands torch tensors to the kernels it tests
import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from cuda_util import EmuRunner, requires_nvrtc  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "compat"))
import test_lang_safe_value as SV  # noqa: E402

rng = np.random.default_rng(0)


def emulate(func, *args, arch="sm_80"):
    r = EmuRunner(func, arch=arch)
    out = r(*args)
    assert r.report["races"] == [], r.report["races"][:3]
    return out


def padded(a, PM, PN, fill, dtype):
    ref = np.full((PM, PN), fill, dtype=dtype)
    ref[:a.shape[0], :a.shape[1]] = a.astype(dtype)
    return ref


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("dt,pad", [(T.float32, -99), (T.float16, 3.5), (T.float32, None)])
def test_tile_copy(arch, dt, pad):
    M, N, PM, PN = 70, 75, 96, 96
    np_dt = np.float32 if dt == T.float32 else np.float16
    a = rng.standard_normal((M, N)).astype(np_dt)
    f = SV.padded_copy.build(M, N, PM, PN, 32, 32, dt, dt, pad)
    b = emulate(f, a, np.zeros((PM, PN), np_dt), arch=arch)[1]
    np.testing.assert_array_equal(b, padded(a, PM, PN, 0 if pad is None else pad, np_dt))


def _pipelined(M, N, bm, bn, pad, stages):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), B: T.Tensor((bm, bn), T.float32)):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((bm, bn), T.float16)
            acc = T.alloc_fragment((bm, bn), T.float32)
            T.annotate_safe_value({A: pad})
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=stages):
                T.copy(A[0:bm, k * bn:(k + 1) * bn], s)      # cp.async; the last tile is ragged
                for i, j in T.Parallel(bm, bn):
                    acc[i, j] += T.cast(s[i, j], T.float32)
            T.copy(acc, B)
    return main


@pytest.mark.parametrize("stages", [0, 2])
def test_pipelined_cp_async_copy(stages):
    M, N, bm, bn, pad = 20, 100, 32, 64, -2.0      # rows 20..31 and columns 100..127 are outside
    a = rng.standard_normal((M, N)).astype(np.float16)
    b = emulate(_pipelined(M, N, bm, bn, pad, stages), a, np.zeros((bm, bn), np.float32))[1]
    full = padded(a, bm, 2 * bn, pad, np.float16).astype(np.float64)
    np.testing.assert_allclose(b, full[:, :bn] + full[:, bn:], rtol=1e-6, atol=1e-6)


def _to_fragment(M, N, bm, bn, pad):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((bm, bn), T.float32)):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((bm, bn), T.float32)
            T.annotate_safe_value({A: pad})
            T.copy(A[0:bm, 0:bn], f)
            for i, j in T.Parallel(bm, bn):
                f[i, j] = f[i, j] * 2.0
            T.copy(f, B)
    return main


def test_global_to_fragment_copy():
    a = rng.standard_normal((30, 50)).astype(np.float32)
    b = emulate(_to_fragment(30, 50, 32, 64, 1.25), a, np.zeros((32, 64), np.float32))[1]
    np.testing.assert_array_equal(b, padded(a, 32, 64, 1.25, np.float32) * 2)


@requires_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_nvrtc_compiles(arch):
    for f in (SV.padded_copy.build(70, 75, 96, 96, 32, 32, T.float16, T.float16, -99),
              _pipelined(20, 100, 32, 64, -2.0, 2), _to_fragment(30, 50, 32, 64, 1.25)):
        k = tilelang.compile(f, target=f"cuda -arch={arch}")
        assert k.get_kernel_source()
