"""The cuda lowering of the tests/compat programs, run on the cuda emulator (no GPU) against numpy:
the kernels tests/compat runs on cpu (and on a GPU in scripts/gpu_check.sh), checked here for cuda
in CI, with no shared-memory race."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("torch")  # the compat modules hand torch tensors to the kernels they test
from cuda_util import EmuRunner  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "compat"))
import test_lang_alloc as AL  # noqa: E402
import test_lang_copy_loops as CL  # noqa: E402
import test_lang_math as MA  # noqa: E402
import test_norm_topk as NT  # noqa: E402

rng = np.random.default_rng(0)


def emulate(func, *args):
    r = EmuRunner(func)
    out = r(*args)
    assert r.report["races"] == [], r.report["races"][:3]
    return out


def test_copy_forms():
    A = rng.standard_normal((100, 70)).astype(np.float32)
    out = emulate(CL.copy_forms.build(100, 70), A, np.zeros_like(A))[1]
    np.testing.assert_allclose(out, A + 1)


def test_loop_kinds():
    a = rng.standard_normal(256).astype(np.float32)
    x = emulate(CL.loops.build(256, 64), a, np.zeros((256, 4), np.float32))[1]
    b = a.reshape(-1, 64).astype(np.float64)
    np.testing.assert_allclose(x[:, 0], np.repeat(b[:, 0::2].sum(1), 64), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(x[:, 1], a * 2)
    np.testing.assert_array_equal(x[:, 2], np.tile(np.arange(64), 4))
    np.testing.assert_array_equal(x[:, 3], b[:, ::-1].reshape(-1).astype(np.float32))


@pytest.mark.parametrize("kw", [{}, {"persistent": True}, {"swizzle": True}], ids=["plain", "persistent", "swizzle"])
def test_pipelined_gemm(kw):
    A = rng.standard_normal((192, 96)).astype(np.float16)
    B = rng.standard_normal((96, 128)).astype(np.float16)
    out = emulate(CL.pipelined_gemm.build(192, 128, 96, **kw), A, B, np.zeros((192, 128), np.float32))[2]
    np.testing.assert_allclose(out, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-3, atol=1e-2)


def test_kernel_with_no_grid():
    a = rng.standard_normal(200).astype(np.float32)
    out = emulate(CL.single_block.build(200), a, np.zeros(200, np.float32))[1]
    np.testing.assert_array_equal(out, np.maximum(a, 0))


def test_float_math():
    A = rng.standard_normal((32, 24)).astype(np.float32)
    o = emulate(MA.float_ops.build(32, 24, -0.5, 0.75), A, np.zeros((32, 24, 6), np.float32))[1]
    a = A.astype(np.float64)
    np.testing.assert_allclose(o[..., 0], np.clip(a, -0.5, 0.75), rtol=1e-6)
    np.testing.assert_allclose(o[..., 2], np.exp2(a) + np.log2(np.abs(a) + 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o[..., 3], 1 / np.sqrt(a * a + 1), rtol=1e-5)
    np.testing.assert_array_equal(o[..., 4], np.trunc(A * 100))


def test_integer_and_bit_ops():
    a = rng.integers(-10000, 10000, 256).astype(np.int32)
    b = rng.integers(0, 1 << 20, 256).astype(np.int32)
    o = emulate(MA.int_ops.build(256), a, b, np.zeros((256, 10), np.int64))[2]
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    ref = np.stack([a64 << 3, a64 >> 2, a64 & b64, (a64 | b64) ^ 5, a64 ^ b64, ~a64, np.floor_divide(a64, 7),
                    np.mod(a64, 7), -np.floor_divide(-np.abs(a64), 7), np.fmod(a64, 7)], axis=1)
    np.testing.assert_array_equal(o, ref)


def test_any_of_all_of():
    mask = rng.random((4, 8, 4)) > 0.6
    A = rng.standard_normal((64, 64)).astype(np.float32)
    o = emulate(MA.blocksparse_rows.build(64, 64, 16, 8), A, mask, np.zeros((64, 2), np.float32))[2]
    sums = A.astype(np.float64).reshape(4, 16, 8, 8).sum(-1)
    np.testing.assert_allclose(o[:, 0], (sums * mask.any(-1)[:, None, :]).sum(-1).reshape(-1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(o[:, 1], np.repeat(mask[..., 0:2].all(-1).sum(-1), 16))


def test_alloc_var_global_local():
    A = rng.standard_normal((16, 40)).astype(np.float32)
    np.testing.assert_array_equal(emulate(AL.row_max_with_var.build(16, 40), A, np.zeros(16, np.float32))[1],
                                  A.max(1))
    S = rng.standard_normal((64, 512)).astype(np.float32)
    out = emulate(AL.split_sum.build(64, 512, 4), S, np.zeros(64, np.float32), np.zeros((4, 64), np.float32))[1]
    np.testing.assert_allclose(out, S.astype(np.float64).sum(1), rtol=1e-5, atol=1e-3)
    a = rng.standard_normal(256).astype(np.float32)
    out = emulate(AL.local_and_buffer.build(256, 64), a, np.zeros(256, np.float32))[1]
    np.testing.assert_array_equal(out, (a.reshape(-1, 64)[:, ::-1] * 2).reshape(-1))


def test_topk():
    logits = rng.permutation(64 * 64).astype(np.float32).reshape(64, 64)
    o = emulate(NT.topk.build(64, 64, 4), logits, np.zeros((64, 4), np.float32), np.zeros((64, 4), np.int32))
    idx = np.argsort(-logits, 1)[:, :4]
    np.testing.assert_array_equal(o[1], np.take_along_axis(logits, idx, 1))
    np.testing.assert_array_equal(o[2], idx)


def test_layernorm_forward_backward():
    import ml_dtypes
    N, D, eps = 16, 256, 1e-5
    bf = ml_dtypes.bfloat16
    x = rng.standard_normal((N, D)).astype(bf)
    g = rng.standard_normal(D).astype(bf)
    b = rng.standard_normal(D).astype(bf)
    dy = rng.standard_normal((N, D)).astype(bf)
    o = emulate(NT.layernorm_fwd.build(N, D, eps), x, g, b, np.zeros((N, D), bf), np.zeros(N, np.float32),
                np.zeros(N, np.float32))
    y, mean, rstd = o[3], o[4], o[5]
    x64, g64, b64, dy64 = (t.astype(np.float64) for t in (x, g, b, dy))
    mu = x64.mean(1, keepdims=True)
    r = 1 / np.sqrt(((x64 - mu) ** 2).mean(1, keepdims=True) + eps)
    xhat = (x64 - mu) * r
    np.testing.assert_allclose(y.astype(np.float64), xhat * g64 + b64, rtol=2e-2, atol=5e-2)
    o = emulate(NT.layernorm_bwd.build(N, D), dy, x, g, mean, rstd, np.zeros((N, D), bf), np.zeros(D, np.float32),
                np.zeros(D, np.float32))
    dxhat = dy64 * g64
    dx = r * (dxhat - dxhat.mean(1, keepdims=True) - xhat * (dxhat * xhat).mean(1, keepdims=True))
    np.testing.assert_allclose(o[5].astype(np.float64), dx, rtol=2e-2, atol=5e-2)
    np.testing.assert_allclose(o[6], (dy64 * xhat).sum(0), rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(o[7], dy64.sum(0), rtol=1e-3, atol=1e-2)


def test_split_k_gemv_with_shared_atomics():
    a = rng.standard_normal(256).astype(np.float16)
    b = rng.standard_normal((128, 256)).astype(np.float16)
    out = emulate(AL.splitk_gemv.build(128, 256), a, b, np.zeros(128, np.float16))[2]
    np.testing.assert_allclose(out.astype(np.float64), b.astype(np.float64) @ a.astype(np.float64), rtol=1e-2,
                               atol=5e-2)
