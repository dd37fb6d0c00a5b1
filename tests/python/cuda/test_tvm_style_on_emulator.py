"""The cuda lowering of the TVM-style forms, T.im2col and T.tvm_warp_shuffle (tests/compat/
test_compat_tvm_style.py, test_compat_conv_shuffle.py), run on the cuda emulator (no GPU) against
numpy, with no shared-memory race; and NVRTC compiles them (compile only)."""
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the compat modules hand torch tensors to the kernels they test
import tilelang  # noqa: E402
from cuda_util import EmuRunner, requires_nvrtc  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "compat"))
import test_compat_conv_shuffle as CS  # noqa: E402
import test_compat_tvm_style as TS  # noqa: E402

rng = np.random.default_rng(0)


def emulate(func, *args, arch="sm_80"):
    r = EmuRunner(func, arch=arch)
    out = r(*args)
    assert r.report["races"] == [], r.report["races"][:3]
    return out


@pytest.mark.parametrize("block_N,reduce_threads", [(2, 32), (4, 8)])
def test_allreduce_over_thread_y(block_N, reduce_threads):
    N, K = 16, 128
    W = rng.standard_normal((N, K)).astype(np.float16)
    x = rng.standard_normal(K).astype(np.float16)
    y = emulate(TS.splitk_gemv(N, K, block_N, reduce_threads), W, x, np.zeros(N, np.float32))[2]
    np.testing.assert_allclose(y, W.astype(np.float64) @ x.astype(np.float64), rtol=1e-4, atol=1e-3)


def test_thread_binding_kernel():
    A = rng.standard_normal((6, 96)).astype(np.float32)
    B = emulate(TS.bound_scale(6, 96, 32), A, np.zeros_like(A))[1]
    np.testing.assert_allclose(B, A * 3.0 - (np.arange(96) % 32), rtol=1e-6, atol=1e-5)


def test_warp_shuffle():
    X = rng.standard_normal((2, 64, 4)).astype(np.float32)
    f = CS.warp_sums.get_tir(torch.from_numpy(X))
    Y, R = emulate(f, X, np.zeros_like(X), np.zeros((2, 64), np.float32))[1:]
    ref = X.astype(np.float64).reshape(2, 2, 32, 4).sum(2, keepdims=True)
    np.testing.assert_allclose(Y, np.broadcast_to(ref, (2, 2, 32, 4)).reshape(2, 64, 4), rtol=1e-5, atol=1e-5)
    lane = np.arange(64)
    np.testing.assert_array_equal(R, X[:, (lane // 8) * 8 + (lane % 32 + 3) % 8, 0])


def test_im2col_conv():
    N, C, H, W, F, K, S, D, P = 2, 12, 7, 6, 20, 3, 2, 1, 1
    a = rng.standard_normal((N, H, W, C)).astype(np.float16)
    w = rng.standard_normal((K, K, C, F)).astype(np.float16)
    f = CS.conv2d_nhwc.get_tir(torch.from_numpy(a), torch.from_numpy(w), S, D, P)
    OH, OW = (H + 2 * P - D * (K - 1) - 1) // S + 1, (W + 2 * P - D * (K - 1) - 1) // S + 1
    out = emulate(f, a, w, np.zeros((N, OH, OW, F), np.float32))[2]
    ref = torch.conv2d(torch.from_numpy(a).permute(0, 3, 1, 2).double(), torch.from_numpy(w).permute(3, 2, 0, 1).double(),
                       stride=S, padding=P, dilation=D).permute(0, 2, 3, 1).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)


@requires_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_nvrtc_compiles(arch):
    target = f"cuda -arch={arch}"
    tilelang.compile(TS.splitk_gemv(16, 128, 2, 32), target=target)
    tilelang.compile(TS.bound_scale(6, 96, 32), target=target)
    tilelang.compile(TS.handle_axpy(1000, 128), target=target)
    tilelang.compile(CS.warp_sums.get_tir(torch.zeros(2, 64, 4)), target=target)
    tilelang.compile(CS.conv2d_nhwc.get_tir(torch.zeros(2, 7, 6, 12).half(), torch.zeros(3, 3, 12, 20).half(), 2, 1, 1),
                     target=target)


def _int16_atomics(dt):
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((4, 64), dt), S: T.Tensor((64,), dt), Mx: T.Tensor((64,), dt), Mn: T.Tensor((64,), dt)):
        with T.Kernel(4, threads=64) as bx:
            tx = T.get_thread_binding()
            T.atomic_add(S[tx], A[bx, tx])
            T.atomic_max(Mx[tx], A[bx, tx])
            T.atomic_min(Mn[tx], A[bx, tx])
    return main


@requires_nvrtc
@pytest.mark.parametrize("dt", ["int16", "uint16"])
def test_16bit_integer_atomics(dt):
    """16-bit integer atomics (no native CUDA one: compare-and-swap on the enclosing word) compile
    with NVRTC (they did not: no tl::atomic_add overload) and give the exact results."""
    f = _int16_atomics(dt)
    for arch in ("sm_80", "sm_90a"):
        tilelang.compile(f, target=f"cuda -arch={arch}")
    info = np.iinfo(dt)
    A = rng.integers(0 if dt[0] == "u" else -3000, 3000, (4, 64)).astype(dt)
    out = emulate(f, A, np.zeros(64, dt), np.full(64, info.min, dt), np.full(64, info.max, dt))
    np.testing.assert_array_equal(out[1], A.sum(0).astype(dt))
    np.testing.assert_array_equal(out[2], A.max(0))
    np.testing.assert_array_equal(out[3], A.min(0))
