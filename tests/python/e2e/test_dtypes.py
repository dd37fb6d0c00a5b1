"""float16 / bfloat16 end to end with ml_dtypes numpy arrays: element-wise results are the
correctly rounded float64 results; GEMM, softmax and reductions accumulate in float32 and are
compared with float64 references within the output format's precision."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T

import e2e_kernels as kb

rng = np.random.default_rng(23)
NARROW = ["float16", "bfloat16"]
EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23}


def compile_cpu(prim_func, out_idx=-1):
    return tilelang.compile(prim_func, out_idx=out_idx, target="cpu")


def f64(x):
    return np.asarray(x).astype(np.float64)


@pytest.mark.parametrize("dtype", NARROW)
def test_elementwise_is_correctly_rounded(dtype):
    M, N = 37, 70
    k = compile_cpu(kb.add_2d_direct(M, N, 16, 32, dtype))
    npt = kb.np_dtype(dtype)
    a = rng.standard_normal((M, N)).astype(npt)
    b = (rng.standard_normal((M, N)) * 1e-2).astype(npt)  # sums that need rounding
    c = k(a, b)
    assert c.dtype == npt
    expected = (f64(a) + f64(b)).astype(npt)  # float64 sum rounded once: the correctly rounded sum
    np.testing.assert_array_equal(c.view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("out_dtype", ["same", "float32"])
@pytest.mark.parametrize("transpose_B", [False, True])
def test_gemm_narrow_inputs_float32_accumulate(dtype, out_dtype, transpose_B):
    M, N, K = 65, 48, 200
    out = dtype if out_dtype == "same" else out_dtype
    k = compile_cpu(kb.gemm(M, N, K, 32, 16, 32, dtype, "float32", out, transpose_B=transpose_B))
    npt = kb.np_dtype(dtype)
    a = rng.uniform(-1, 1, (M, K)).astype(npt)
    b = rng.uniform(-1, 1, (N, K) if transpose_B else (K, N)).astype(npt)
    c = k(a, b)
    assert c.dtype == kb.np_dtype(out)
    ref = f64(a) @ (f64(b).T if transpose_B else f64(b))
    # float32 accumulation over K=200 products is far inside the output format's rounding.
    tol = max(EPS[out], 1e-5)
    np.testing.assert_allclose(f64(c), ref, rtol=tol, atol=tol * np.abs(ref).max())
    if out == dtype:  # most elements are the correctly rounded exact result
        assert (c == ref.astype(npt)).mean() > 0.95


def test_gemm_accumulation_is_float32_not_float16():
    """2048 + 1 + 1 + ... - 2048: a float16 accumulator (ulp 2 at 2048) would drop every 1."""
    M = N = 16
    K = 64
    k = compile_cpu(kb.gemm(M, N, K, 16, 16, 16, "float16", "float32", "float32"))
    a = np.ones((M, K), np.float16)
    b = np.ones((K, N), np.float16)
    b[0] = 2048.0
    b[-1] = -2048.0
    c = k(a, b)
    np.testing.assert_array_equal(c, np.full((M, N), K - 2, np.float32))


@pytest.mark.parametrize("dtype", NARROW)
def test_softmax_narrow_input(dtype):
    M, N = 20, 300
    k = compile_cpu(kb.softmax_streamed(M, N, 8, 64, dtype))
    a = (rng.standard_normal((M, N)) * 3).astype(kb.np_dtype(dtype))
    b = k(a)
    assert b.dtype == kb.np_dtype(dtype)
    x = f64(a)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(f64(b), ref, rtol=EPS[dtype], atol=1e-6)


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("op", ["sum", "max", "absmax", "abssum"])
@pytest.mark.parametrize("out", ["same", "float32"])
def test_reductions_narrow(dtype, op, out):
    M, N = 40, 48
    out_dtype = dtype if out == "same" else out
    k = compile_cpu(kb.reduce_tiles(M, N, 16, 48, op, 1, dtype, out_dtype))
    a = rng.standard_normal((M, N)).astype(kb.np_dtype(dtype))
    r = k(a)
    assert r.dtype == kb.np_dtype(out_dtype)
    x = f64(a)
    ref = {"sum": x.sum(1), "max": x.max(1), "absmax": np.abs(x).max(1), "abssum": np.abs(x).sum(1)}[op][:, None]
    if op in ("max", "absmax"):
        np.testing.assert_array_equal(f64(r), ref)  # exact: the result is one of the inputs
    else:
        # float32 accumulation, then one rounding into the output format.
        np.testing.assert_allclose(f64(r), ref, rtol=EPS[out_dtype], atol=1e-5)


@pytest.mark.parametrize("dtype", NARROW)
def test_cumsum_narrow(dtype):
    M, N = 9, 40
    k = compile_cpu(kb.cumsum_rows(M, N, 8, False, dtype))
    a = rng.uniform(-1, 1, (M, N)).astype(kb.np_dtype(dtype))
    b = k(a)
    ref = np.cumsum(f64(a), 1)
    np.testing.assert_allclose(f64(b), ref, rtol=EPS[dtype], atol=EPS[dtype] * 4)


@pytest.mark.parametrize("src,dst", [("float32", "bfloat16"), ("float32", "float16"), ("bfloat16", "float16"),
                                     ("float16", "bfloat16"), ("bfloat16", "float32")])
def test_conversions_round_to_nearest_even(src, dst):
    N = 4096

    @T.prim_func
    def convert(A: T.Tensor((N,), src), B: T.Tensor((N,), dst)):
        with T.Kernel(T.ceildiv(N, 1024), threads=128) as bx:
            a = T.alloc_fragment((1024,), src)
            b = T.alloc_fragment((1024,), dst)
            T.copy(A[bx * 1024], a)
            T.copy(a, b)
            T.copy(b, B[bx * 1024])

    k = compile_cpu(convert)
    x = (rng.standard_normal(N) * np.exp2(rng.integers(-12, 12, N))).astype(kb.np_dtype(src))
    y = k(x)
    expected = x.astype(np.float64).astype(kb.np_dtype(dst))  # ml_dtypes / numpy: nearest-even
    np.testing.assert_array_equal(f64(y), f64(expected))
    assert y.dtype == kb.np_dtype(dst)
