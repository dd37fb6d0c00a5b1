"""Sizes that are not multiples of the block: the last tiles hang past the tensor. Reads there
must not disturb the result and writes there must not land anywhere (outputs are checked whole,
and inputs are checked to be unchanged). Compared with numpy in float64."""
import numpy as np
import pytest

import tilelang

import e2e_kernels as kb

rng = np.random.default_rng(11)


def compile_cpu(prim_func, out_idx=-1):
    return tilelang.compile(prim_func, out_idx=out_idx, target="cpu")


def call_checked(kernel, *inputs):
    """Runs the kernel on copies and checks that it did not write into its inputs."""
    copies = [x.copy() for x in inputs]
    out = kernel(*copies)
    for before, after in zip(inputs, copies):
        np.testing.assert_array_equal(after.view(np.uint8), before.view(np.uint8))
    return out


@pytest.mark.parametrize("N,block", [(1, 64), (63, 64), (65, 64), (1000, 128), (4099, 1024)])
def test_elementwise_1d_tails(N, block):
    k = compile_cpu(kb.add_1d(N, block))
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    c = call_checked(k, a, b)
    assert c.shape == (N,)
    np.testing.assert_array_equal(c, (a.astype(np.float64) + b).astype(np.float32))


@pytest.mark.parametrize("M,N", [(1, 1), (17, 31), (33, 64), (64, 65), (100, 7)])
def test_elementwise_2d_tails_direct_global_indexing(M, N):
    k = compile_cpu(kb.add_2d_direct(M, N, 16, 32))
    a, b = rng.standard_normal((M, N)).astype(np.float32), rng.standard_normal((M, N)).astype(np.float32)
    np.testing.assert_array_equal(call_checked(k, a, b), (a.astype(np.float64) + b).astype(np.float32))


def test_elementwise_2d_tails_do_not_write_past_the_output():
    """The output is passed in, inside a larger array: the elements around it stay untouched."""
    M, N = 37, 45
    k = tilelang.compile(kb.scale_add_2d(M, N, 16, 32), target="cpu")
    a, b = rng.standard_normal((M, N)).astype(np.float32), rng.standard_normal((M, N)).astype(np.float32)
    canvas = np.full(M * N + 64, 7.0, np.float32)
    out = canvas[:M * N].reshape(M, N)
    k(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) * b + 1, rtol=1e-6, atol=1e-6)
    assert (canvas[M * N:] == 7.0).all()


@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (33, 17, 9), (100, 72, 80), (64, 64, 100), (65, 127, 33)])
@pytest.mark.parametrize("transpose_A,transpose_B", [(False, False), (False, True), (True, False), (True, True)])
def test_gemm_tails(M, N, K, transpose_A, transpose_B):
    k = compile_cpu(kb.gemm(M, N, K, 32, 32, 16, "float32", transpose_A=transpose_A, transpose_B=transpose_B))
    a = rng.uniform(-1, 1, (K, M) if transpose_A else (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (N, K) if transpose_B else (K, N)).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = (a64.T if transpose_A else a64) @ (b64.T if transpose_B else b64)
    np.testing.assert_allclose(call_checked(k, a, b), ref, rtol=1e-5, atol=1e-5)


def softmax_ref(a):
    a = a.astype(np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("M,N,block_M", [(1, 5, 8), (37, 77, 8), (45, 203, 16)])
def test_softmax_whole_rows_tails(M, N, block_M):
    k = compile_cpu(kb.softmax_rows(M, N, block_M))
    a = (rng.standard_normal((M, N)) * 4).astype(np.float32)
    np.testing.assert_allclose(call_checked(k, a), softmax_ref(a), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("M,N", [(37, 203), (8, 64), (9, 65), (3, 1)])
def test_softmax_streamed_column_tails(M, N):
    """Mostly negative logits: an unmasked tail (0) would dominate the max and the sum."""
    k = compile_cpu(kb.softmax_streamed(M, N, 8, 64))
    a = (rng.standard_normal((M, N)) * 3 - 20).astype(np.float32)
    np.testing.assert_allclose(call_checked(k, a), softmax_ref(a), rtol=1e-5, atol=1e-7)


REDUCERS = {
    "sum": lambda x, axis: x.sum(axis=axis),
    "max": lambda x, axis: x.max(axis=axis),
    "min": lambda x, axis: x.min(axis=axis),
    "abssum": lambda x, axis: np.abs(x).sum(axis=axis),
    "absmax": lambda x, axis: np.abs(x).max(axis=axis),
}


def tiled_reference(a, block_M, block_N, op, dim):
    M, N = a.shape
    f = REDUCERS[op]
    if dim == 0:
        return np.stack([f(a[r:r + block_M], 0) for r in range(0, M, block_M)])
    return np.stack([f(a[:, c:c + block_N], 1) for c in range(0, N, block_N)], axis=1)


@pytest.mark.parametrize("op", sorted(REDUCERS))
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("M,N", [(37, 45), (16, 33), (5, 16)])
def test_reductions_tails(op, dim, M, N):
    k = compile_cpu(kb.reduce_tiles(M, N, 16, 16, op, dim))
    # One sign for all: a 0 from the tail would win a max of negatives or a min of positives.
    sign = -1.0 if op in ("max", "sum") else 1.0
    a = (sign * (rng.uniform(0.5, 2.0, (M, N)))).astype(np.float32)
    ref = tiled_reference(a.astype(np.float64), 16, 16, op, dim)
    np.testing.assert_allclose(call_checked(k, a), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("M,N", [(37, 45), (1, 1), (9, 130)])
def test_cumsum_tails(reverse, M, N):
    k = compile_cpu(kb.cumsum_rows(M, N, 8, reverse))
    a = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    a64 = a.astype(np.float64)
    ref = np.flip(np.cumsum(np.flip(a64, 1), 1), 1) if reverse else np.cumsum(a64, 1)
    np.testing.assert_allclose(call_checked(k, a), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,clear", [(op, True) for op in sorted(REDUCERS)] +
                         [("sum", False), ("max", False), ("min", False)])
@pytest.mark.parametrize("W", [1, 3])
def test_reductions_over_a_dimension_of_extent_1(op, clear, W):
    """A tile N=1 columns wide (a generic kernel called with N=1): reducing along it is element-wise."""
    M = 37
    k = tilelang.compile(kb.reduce_columns_of_width(M, W, 16, op, clear), target="cpu")
    a = rng.standard_normal((M, W)).astype(np.float32)
    r = rng.standard_normal(M).astype(np.float32)
    out = r.copy()
    k(a, out)
    ref = REDUCERS[op](a.astype(np.float64), 1)
    if not clear:
        ref = {"sum": ref + r, "max": np.maximum(ref, r), "min": np.minimum(ref, r)}[op]
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_abs_reduction_over_extent_1_without_clear_is_not_implemented():
    with pytest.raises(NotImplementedError, match="T.reduce_abssum\\(clear=False\\) along a dimension of extent 1"):
        kb.reduce_columns_of_width(16, 1, 16, "abssum", False)
