"""cpu kernels through tilelang.compile against numpy in float64: the tile GEMM's micro-kernels (odd
sizes with tails, transposes, clear vs accumulate, fp32 / bf16 / fp16 / int8), the forced portable
path (TL_CPU_ISA=portable), and vectorized reductions, scans and exp."""
import ctypes
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


def gemm_kernel(M, N, K, bm, bn, bk, dtype, acc, trans_A=False, trans_B=False, accumulate=False, swizzle=0,
                order="row"):
    """TileLang's tiled GEMM, C in the accumulator type. accumulate=True adds A @ B to C's old value
    (C is read first)."""
    return zoo.gemm(M, N, K, bm, bn, bk, dtype, acc, acc, trans_A=trans_A, trans_B=trans_B, accumulate=accumulate,
                    swizzle_panel=swizzle, swizzle_order=order)


def random(shape, dtype, rng):
    if dtype == "int8":
        return rng.integers(-100, 100, size=shape).astype(np.int8)
    x = rng.uniform(-1, 1, size=shape).astype(np.float32)
    return x.astype({"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}[dtype])


def kernel_isa(kernel):
    lib = ctypes.CDLL(os.path.join(kernel.artifact_dir, "kernel.so"))
    lib.tl_kernel_isa.restype = ctypes.c_char_p
    return lib.tl_kernel_isa().decode()


CASES = [
    # M, N, K, blocks, dtype, acc, trans_A, trans_B
    (128, 256, 128, (64, 128, 64), "float32", "float32", False, False),
    (100, 72, 50, (32, 32, 16), "float32", "float32", False, False),  # partial tiles: guarded copies
    (224, 128, 96, (112, 128, 48), "float32", "float32", False, False),  # B packed into panels, row tail
    (96, 80, 70, (48, 40, 32), "float32", "float32", False, True),    # row, vector and lane tails
    (64, 48, 40, (32, 48, 8), "float32", "float32", True, False),
    (40, 56, 36, (40, 56, 12), "float32", "float32", True, True),
    (128, 96, 64, (64, 96, 32), "bfloat16", "float32", False, False),  # vdpbf16ps where present
    (64, 64, 62, (32, 32, 31), "bfloat16", "float32", False, True),    # odd block K: a zero pair half
    (64, 80, 48, (32, 80, 16), "float16", "float32", False, False),
    (48, 40, 64, (16, 40, 32), "int8", "int32", False, True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[4]}-{c[0]}x{c[1]}x{c[2]}-tA{int(c[6])}-tB{int(c[7])}")
@pytest.mark.parametrize("accumulate", [False, True], ids=["clear", "accumulate"])
def test_gemm_matches_float64(case, accumulate, rng):
    M, N, K, (bm, bn, bk), dtype, acc, ta, tb = case
    kernel = tilelang.compile(gemm_kernel(M, N, K, bm, bn, bk, dtype, acc, ta, tb, accumulate), target="cpu")
    a = random((K, M) if ta else (M, K), dtype, rng)
    b = random((N, K) if tb else (K, N), dtype, rng)
    c0 = (rng.uniform(-1, 1, (M, N)) * 4).astype(acc)
    c = c0.copy()
    kernel(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = (a64.T if ta else a64) @ (b64.T if tb else b64) + (c0.astype(np.float64) if accumulate else 0)
    if acc == "int32":
        np.testing.assert_array_equal(c, ref.astype(np.int64))
    else:
        np.testing.assert_allclose(c, ref, rtol=0, atol=2e-6 * K + 1e-6 * np.abs(ref).max())
    assert kernel_isa(kernel) in ("avx512+bf16+vnni+amx", "avx512+bf16+amx", "avx512+amx", "avx512+bf16+vnni",
                                  "avx512+bf16", "avx512+vnni", "avx512", "avx2", "portable")


@pytest.mark.parametrize("panel,order", [(2, "row"), (3, "col"), (8, "row")])
def test_swizzled_grid_covers_every_tile_once(panel, order, rng):
    """T.use_swizzle rasterizes the grid on cpu too (grouped block order): a 5 x 7 grid of tiles with
    panels that do not divide it still computes every C tile exactly once (accumulate would double
    a tile computed twice; a missed tile keeps its old value)."""
    M, N, K = 7 * 16, 5 * 16, 32
    kernel = tilelang.compile(gemm_kernel(M, N, K, 16, 16, 16, "float32", "float32", accumulate=True, swizzle=panel,
                                          order=order), target="cpu")
    a, b = random((M, K), "float32", rng), random((K, N), "float32", rng)
    c0 = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    c = c0.copy()
    kernel(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64) + c0, rtol=0, atol=1e-4)
    assert "rasterize2d" in kernel.get_kernel_source()


PORTABLE_SCRIPT = r"""
import sys, ctypes, os
import numpy as np, ml_dtypes
sys.path.insert(0, sys.argv[1])
import tilelang
from test_cpu_kernels import gemm_kernel, random, kernel_isa
rng = np.random.default_rng(7)
for dtype, ta, tb in (("float32", False, False), ("float32", True, True), ("bfloat16", False, True), ("float16", False, False)):
    M, N, K = 70, 90, 46
    k = tilelang.compile(gemm_kernel(M, N, K, 35, 45, 23, dtype, "float32", ta, tb), target="cpu")
    a = random((K, M) if ta else (M, K), dtype, rng)
    b = random((N, K) if tb else (K, N), dtype, rng)
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = (a64.T if ta else a64) @ (b64.T if tb else b64)
    np.testing.assert_allclose(c, ref, rtol=0, atol=1e-4)
    print(dtype, kernel_isa(k))
"""


def test_forced_portable_path_matches_float64(tmp_path):
    """TL_CPU_ISA=portable makes the loaded kernels run the portable GEMM (16-byte vectors): fresh
    process, since the tier is chosen once per loaded kernel."""
    env = dict(os.environ, TL_CPU_ISA="portable")
    r = subprocess.run([sys.executable, "-c", PORTABLE_SCRIPT, HERE], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.split("\n")
    assert [ln.split()[1] for ln in lines if ln] == ["portable"] * 4, r.stdout


def test_softmax_cumsum_reduce_match_float64(rng):
    M, N, bm = 37, 203, 4  # rows not a multiple of any vector width, a partial last block

    @T.prim_func
    def rows(X: T.Tensor((M, N), "float32"), S: T.Tensor((M, N), "float32"), P: T.Tensor((M, N), "float32"),
             A: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            x = T.alloc_fragment((bm, N), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            am = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], x)
            T.reduce_absmax(x, am, dim=1)
            T.copy(am, A[bx * bm])
            T.reduce_max(x, mx, dim=1)
            for i, j in T.Parallel(bm, N):
                x[i, j] = T.exp(x[i, j] - mx[i])
            T.reduce_sum(x, sm, dim=1)
            for i, j in T.Parallel(bm, N):
                x[i, j] /= sm[i]
            T.copy(x, S[bx * bm, 0])
            T.cumsum(x, dim=1)
            T.copy(x, P[bx * bm, 0])

    kernel = tilelang.compile(rows, target="cpu")
    x = rng.standard_normal((M, N)).astype(np.float32) * 3
    s, p, am = np.empty_like(x), np.empty_like(x), np.empty(M, np.float32)
    kernel(x, s, p, am)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    soft = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(s, soft, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(p, np.cumsum(s.astype(np.float64), axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(am, np.abs(x).max(axis=1))


@pytest.mark.parametrize("rows,n", [(64, 64), (40, 96), (19, 32), (24, 40)])
@pytest.mark.parametrize("clear", [True, False])
def test_row_reductions_of_a_2d_fragment_match_float64(rows, n, clear, rng):
    """T.reduce_* over the rows of a 2-D fragment into a float32 fragment: one reduce_rows call
    (include/tl/cpu/reduce.h: whole blocks of vector-width rows folded together, the rest row by row;
    n = 40 is not a whole number of 16-lane vectors), with and without clear (then the old values
    take part), against numpy in float64."""
    kinds = ("sum", "max", "min", "abssum", "absmax")

    @T.prim_func
    def red(X: T.Tensor((rows, n), "float32"), Init: T.Tensor((5, rows), "float32"), Y: T.Tensor((5, rows), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((rows, n), "float32")
            ys = [T.alloc_fragment((rows,), "float32") for _ in kinds]
            T.copy(X, x)
            for k, y in enumerate(ys):
                T.copy(Init[k, 0], y)
            T.reduce_sum(x, ys[0], dim=1, clear=clear)
            T.reduce_max(x, ys[1], dim=1, clear=clear)
            T.reduce_min(x, ys[2], dim=1, clear=clear)
            T.reduce_abssum(x, ys[3], dim=1, clear=clear)
            T.reduce_absmax(x, ys[4], dim=1, clear=clear)
            for k, y in enumerate(ys):
                T.copy(y, Y[k, 0])

    kernel = tilelang.compile(red, target="cpu")
    with open(os.path.join(kernel.artifact_dir, "kernel.cc")) as f:
        assert f.read().count("tl::cpu::reduce_rows<") == 5
    x = rng.standard_normal((rows, n)).astype(np.float32)
    init = rng.standard_normal((5, rows)).astype(np.float32)
    y = np.empty_like(init)
    kernel(x, init, y)
    x64, i64 = x.astype(np.float64), init.astype(np.float64)
    want = [x64.sum(1), x64.max(1), x64.min(1), np.abs(x64).sum(1), np.abs(x64).max(1)]
    if not clear:
        want = [want[0] + i64[0], np.maximum(want[1], i64[1]), np.minimum(want[2], i64[2]), want[3] + i64[3],
                np.maximum(want[4], i64[4])]
    for k, name in enumerate(kinds):
        np.testing.assert_allclose(y[k], want[k], rtol=2e-6, atol=2e-6 * n, err_msg=name)
