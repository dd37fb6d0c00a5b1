"""Bad kernel calls (and bad compile options): each raises a typed error whose message names the
culprit, and the process keeps working afterwards."""
import importlib.util
import atexit
import os
import shutil
import tempfile

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)

M, K = 64, 32


def matvec():
    """y = A @ x (+ bias * scale) with a dynamic batch of rows and a scalar."""
    m = T.dynamic("m")

    @T.prim_func
    def mv(A: T.Tensor((m, K), "float16"), x: T.Tensor((K,), "float32"), bias: T.Tensor((m,), "float32"),
           scale: T.float32, rows: T.int32, y: T.Tensor((m,), "float32")):
        with T.Kernel(T.ceildiv(m, 16), threads=16) as bx:
            for i in T.serial(16):
                r = bx * 16 + i
                if r < rows:
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for k in T.serial(K):
                        acc = acc + T.Cast("float32", A[r, k]) * x[k]
                    y[r] = acc + bias[r] * scale
    return mv


def strided():
    n = T.dynamic("n")
    ld = T.dynamic("ld", "int64")

    @T.prim_func
    def st(X: T.StridedTensor((n, 4), (ld, 1), "float32"), Y: T.Tensor((n, 4), "float32")):
        with T.Kernel(n, threads=4) as bx:
            for j in T.Parallel(4):
                Y[bx, j] = X[bx, j]
    return st


def bf16_copy():
    @T.prim_func
    def cp(A: T.Tensor((64,), "bfloat16"), B: T.Tensor((64,), "bfloat16")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                B[i] = A[i]
    return cp


@pytest.fixture(scope="module")
def kernel():
    return tilelang.compile(matvec(), out_idx=[-1], target="cpu")  # host tensors: pinned to cpu


rng = np.random.default_rng(7)
A = rng.standard_normal((M, K)).astype(np.float16)
X = rng.standard_normal(K).astype(np.float32)
BIAS = rng.standard_normal(M).astype(np.float32)


def reference(a, x, bias, scale, rows):
    y = a.astype(np.float64) @ x.astype(np.float64) + bias.astype(np.float64) * scale
    return y[:rows]


def still_works(kernel):
    y = kernel(A, X, BIAS, 0.5, M)
    np.testing.assert_allclose(y, reference(A, X, BIAS, 0.5, M), rtol=1e-4, atol=1e-4)


def expect(kernel, exc, patterns, *args):
    with pytest.raises(exc) as info:
        kernel(*args)
    message = str(info.value)
    for p in patterns:
        assert p in message, f"{p!r} not in {message!r}"
    still_works(kernel)
    return message


def test_good_call_matches_reference(kernel):
    still_works(kernel)
    y = kernel(A[:40], X, BIAS[:40], 2.0, 40)
    np.testing.assert_allclose(y, reference(A[:40], X, BIAS[:40], 2.0, 40), rtol=1e-4, atol=1e-4)


def test_wrong_dtype(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'A'", "expects dtype float16, got float32"],
           A.astype(np.float32), X, BIAS, 0.5, M)


def test_wrong_constant_dimension(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'x'", "dimension 0 (32) must be 32, got 31"],
           A, X[:31], BIAS, 0.5, M)


def test_wrong_ndim(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'bias'", "expects a 1-d tensor, got 2-d"],
           A, X, BIAS.reshape(8, 8), 0.5, M)


def test_non_contiguous(kernel):
    at = np.asfortranarray(A)
    expect(kernel, tilelang.ArgumentError, ["parameter 'A'", "must be contiguous", "T.StridedTensor"],
           at, X, BIAS, 0.5, M)
    expect(kernel, tilelang.ArgumentError, ["parameter 'x'", "must be contiguous"], A, np.repeat(X, 2)[::2], BIAS,
           0.5, M)


def test_too_few_arguments(kernel):
    expect(kernel, tilelang.ArgumentError, ["mv() takes 5 arguments", "but 4 were given", "'y' is allocated"],
           A, X, BIAS, 0.5)


def test_output_passed_explicitly(kernel):
    expect(kernel, tilelang.ArgumentError, ["takes 5 arguments", "but 6 were given", "must not be passed"],
           A, X, BIAS, 0.5, M, np.empty(M, np.float32))


def test_dynamic_dimension_mismatch(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'bias'", "dimension 0 (m) must be 64",
                                            "bound from parameter 'A'", "got 48"],
           A, X, BIAS[:48], 0.5, M)


def test_scalar_of_wrong_type(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'rows'", "expects an integer scalar", "got float"],
           A, X, BIAS, 0.5, 64.0)
    expect(kernel, tilelang.ArgumentError, ["parameter 'scale'", "expects a float scalar", "got str"],
           A, X, BIAS, "0.5", M)


def test_scalar_out_of_range(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'rows'", "does not fit in int32"], A, X, BIAS, 0.5, 2 ** 40)


def test_tensor_for_scalar_and_scalar_for_tensor(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'scale'", "got a tensor"], A, X, BIAS, BIAS, M)
    expect(kernel, tilelang.ArgumentError, ["parameter 'x'", "expects a tensor", "got list"],
           A, list(X), BIAS, 0.5, M)


def test_wrong_strides_of_strided_tensor():
    k = tilelang.compile(strided(), out_idx=[1])
    wide = np.arange(60, dtype=np.float32).reshape(6, 10)
    np.testing.assert_array_equal(k(wide[:, 2:6]), wide[:, 2:6])
    with pytest.raises(tilelang.ArgumentError, match=r"parameter 'X'.*stride 1 \(1\) must be 1, got 2"):
        k(wide[:, 0:8:2])
    np.testing.assert_array_equal(k(wide[:, 3:7]), wide[:, 3:7])


def test_bits_of_the_wrong_dtype():
    k = tilelang.compile(bf16_copy(), out_idx=[1])
    a = rng.standard_normal(64).astype(ml_dtypes.bfloat16)
    with pytest.raises(tilelang.ArgumentError, match="parameter 'A'.*expects dtype bfloat16, got uint16"):
        k(a.view(np.uint16))
    with pytest.raises(tilelang.ArgumentError, match="parameter 'A'.*expects dtype bfloat16, got float16"):
        k(a.astype(np.float16))
    np.testing.assert_array_equal(k(a).view(np.uint16), a.view(np.uint16))


def test_output_size_not_determined_by_inputs():
    n = T.dynamic("n")

    @T.prim_func
    def gen(A: T.Tensor((4,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            B[0] = A[0]

    k = tilelang.compile(gen, out_idx=[1])
    with pytest.raises(tilelang.ArgumentError, match="parameter 'B'.*dynamic variable 'n'.*no input tensor"):
        k(np.ones(4, np.float32))
    # Passing B explicitly works.
    k2 = tilelang.compile(gen)
    b = np.zeros(3, np.float32)
    k2(np.full(4, 5.0, np.float32), b)
    assert b[0] == 5.0


@pytest.mark.torch
@pytest.mark.gpu
def test_device_mismatch(kernel):
    import torch
    a = torch.from_numpy(A).cuda()
    expect(kernel, tilelang.ArgumentError, ["parameter 'A'", "is on cuda:0", "host (cpu) memory"],
           a, X, BIAS, 0.5, M)


def test_unknown_target():
    with pytest.raises(ValueError) as info:
        tilelang.compile(matvec(), target="musa")
    assert "unknown target 'musa'" in str(info.value) and "supported targets" in str(info.value)
    assert '"cuda"' in str(info.value) and '"ascend"' in str(info.value)


def test_unknown_pass_config(kernel):
    with pytest.raises(ValueError, match="unknown pass config 'tl.no_such_pass'; accepted keys:.*tl.enable_fast_math"):
        tilelang.compile(matvec(), out_idx=[-1], pass_configs={"tl.no_such_pass": True})
    still_works(kernel)


@pytest.mark.parametrize("out_idx,pattern", [
    ([9], "out_idx entry 9 is out of range: kernel 'mv' has 6 parameters"),
    ([3], "out_idx entry 3 names scalar parameter 'scale'"),
    ([5, -1], "out_idx lists parameter 5 ('y') twice"),
    ("y", "out_idx must be an int or a list of ints"),
])
def test_bad_out_idx(kernel, out_idx, pattern):
    with pytest.raises(ValueError) as info:
        tilelang.compile(matvec(), out_idx=out_idx)
    assert pattern in str(info.value)
    still_works(kernel)


def test_unsupported_array_dtypes(kernel):
    expect(kernel, tilelang.ArgumentError, ["parameter 'x'", "dtype complex64 are not supported"],
           A, X.astype(np.complex64), BIAS, 0.5, M)
    expect(kernel, tilelang.ArgumentError, ["parameter 'x'", "dtype >f4", "native byte order"],
           A, X.astype(">f4"), BIAS, 0.5, M)
