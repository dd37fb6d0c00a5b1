"""The k-loop fusion of forward_gemm_operands (src/target/cpu/forward_gemm_operands.h): a loop whose
body is one T.gemm on global tiles that advance along k becomes one GEMM over the whole k (the header
then keeps C in registers over long stretches of k) — float32 loops always, bfloat16 / float16 / int8
loops when each iteration's GEMM is at most 256 bytes deep (TileLang's examples' block_K = 32).
Checked against numpy in float64 on random inputs, bit for bit against the same kernel with the
fusion off (tl.disable_cpu_gemm_k_fusion: each C element adds the same products in the same order;
float32 and int8, whose sums are exact), and on the emitted C++ (which loops became one call, which
stayed)."""
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

# The kernels keep their own blocks (coarsen_gemm_blocks would merge neighbouring one-GEMM blocks
# of a large enough grid, by the host's core count): these tests check each block's GEMM call.
SINGLE_BLOCKS = {"tl.disable_cpu_block_coarsening": True}

UNFUSED = {"tl.disable_cpu_gemm_k_fusion": True}


def gemm_calls(src):
    """The template arguments of every tl::cpu::gemm call: [(M, N, K, trans_A, trans_B)]."""
    return re.findall(r"tl::cpu::gemm<(\d+), (\d+), (\d+), (true|false), (true|false)>", src)


def kernel(M, N, K, bm, bn, bk, ta=False, tb=False, dtype="float32", acc="float32", clear=True, extra=False,
           every_iteration_clear=False):
    """TileLang's GEMM (copies into shared tiles, T.gemm, pipelined K loop). extra: the loop also
    scales C_local (so it is not only the GEMM); every_iteration_clear: the GEMM clears C on every
    iteration (so only the last k tile counts)."""
    a_shape, b_shape = ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N))
    a_tile, b_tile = ((bk, bm) if ta else (bm, bk)), ((bn, bk) if tb else (bk, bn))

    @T.prim_func
    def f(A: T.Tensor(a_shape, dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared(a_tile, dtype)
            B_shared = T.alloc_shared(b_tile, dtype)
            C_local = T.alloc_fragment((bm, bn), acc)
            if clear:
                T.clear(C_local)
            else:
                T.fill(C_local, 1.0)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                if ta:
                    T.copy(A[k * bk, by * bm], A_shared)
                else:
                    T.copy(A[by * bm, k * bk], A_shared)
                if tb:
                    T.copy(B[bx * bn, k * bk], B_shared)
                else:
                    T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=ta, transpose_B=tb, clear_accum=every_iteration_clear)
                if extra:
                    for i, j in T.Parallel(bm, bn):
                        C_local[i, j] = C_local[i, j] * 0.5
            T.copy(C_local, C[by * bm, bx * bn])
    return f


def operands(M, N, K, ta, tb, dtype, rng):
    a = rng.uniform(-1, 1, (K, M) if ta else (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (N, K) if tb else (K, N)).astype(np.float32)
    if dtype == "bfloat16":
        a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    elif dtype == "float16":
        a, b = a.astype(np.float16), b.astype(np.float16)
    elif dtype == "int8":
        a = rng.integers(-128, 128, a.shape).astype(np.int8)
        b = rng.integers(-128, 128, b.shape).astype(np.int8)
    return a, b


def reference(a, b, ta, tb):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a.T if ta else a) @ (b.T if tb else b)


# M, N, K, blocks, trans_A, trans_B: square, tall-skinny, decode (M = 1 and 16), tails of the
# header's blocking (rows not a multiple of its 14-row blocks, a last column strip of one vector,
# k chunks of 256 with a tail), transposed operands (fused, taken by the header's other paths)
FUSED = [
    (256, 256, 512, (128, 128, 64), False, False),
    (512, 64, 384, (256, 64, 64), False, False),
    (1, 512, 1024, (1, 256, 256), False, False),
    (1, 1024, 1004, (1, 1024, 251), False, False),  # a row wider than a strip: 8 rows of B at a time, 4 left
    (1, 512, 780, (1, 512, 260), True, False),
    (16, 256, 640, (16, 128, 64), False, False),
    (200, 80, 600, (100, 80, 40), False, False),
    (29, 96, 300, (29, 96, 100), False, False),  # 14 + 14 + 1 rows: the next block's prefetch of 14 / 1 / no rows
    (96, 96, 320, (48, 48, 32), True, False),
    (96, 96, 320, (48, 48, 32), False, True),
    (64, 48, 256, (32, 48, 64), True, True),
]


@pytest.mark.parametrize("case", FUSED, ids=lambda c: f"{c[0]}x{c[1]}x{c[2]}-tA{int(c[4])}-tB{int(c[5])}")
def test_fused_k_loop_matches_numpy_and_the_loop(case, rng):
    M, N, K, (bm, bn, bk), ta, tb = case
    prog = kernel(M, N, K, bm, bn, bk, ta, tb)
    fused = tilelang.compile(prog, target="cpu", pass_configs=SINGLE_BLOCKS)
    loop = tilelang.compile(prog, target="cpu", pass_configs={**SINGLE_BLOCKS, **UNFUSED})
    a, b = operands(M, N, K, ta, tb, "float32", rng)
    c1, c2 = np.full((M, N), 7, np.float32), np.full((M, N), 7, np.float32)
    fused(a, b, c1)
    loop(a, b, c2)
    ref = reference(a, b, ta, tb)
    np.testing.assert_allclose(c1, ref, rtol=0, atol=2e-6 * K)
    np.testing.assert_array_equal(c1, c2)
    calls = gemm_calls(fused.get_kernel_source())
    assert calls == [(str(bm), str(bn), str(K), str(ta).lower(), str(tb).lower())], calls
    assert gemm_calls(loop.get_kernel_source()) == [(str(bm), str(bn), str(bk), str(ta).lower(), str(tb).lower())]


def test_fill_before_the_loop_is_kept_and_accumulated_onto(rng):
    """C_local filled with 1 (not folded into the GEMM's clear): the fused GEMM accumulates onto it."""
    M, N, K, bm, bn, bk = 64, 64, 256, 32, 32, 64
    fused = tilelang.compile(kernel(M, N, K, bm, bn, bk, clear=False), target="cpu", pass_configs=SINGLE_BLOCKS)
    a, b = operands(M, N, K, False, False, "float32", rng)
    c = np.zeros((M, N), np.float32)
    fused(a, b, c)
    np.testing.assert_allclose(c, 1.0 + reference(a, b, False, False), rtol=0, atol=2e-6 * K)
    assert gemm_calls(fused.get_kernel_source()) == [("32", "32", "256", "false", "false")]


# dtype, accumulator, M, N, K, blocks, trans_B: shallow narrow-type GEMMs per iteration (the examples'
# block_K = 32; int8 up to 256 k, bf16 / fp16 up to 128), AMX-sized and not, B transposed
NARROW = [
    ("bfloat16", "float32", 128, 96, 512, (64, 48, 32), False),
    ("bfloat16", "float32", 64, 64, 384, (64, 64, 128), True),
    ("float16", "float32", 256, 128, 512, (256, 128, 32), False),
    ("float16", "float32", 128, 128, 256, (128, 128, 32), True),
    ("int8", "int32", 64, 80, 512, (32, 80, 64), False),
    ("int8", "int32", 96, 48, 768, (48, 48, 256), True),
]


@pytest.mark.parametrize("case", NARROW, ids=lambda c: f"{c[0]}-{c[2]}x{c[3]}x{c[4]}-bk{c[5][2]}-tB{int(c[6])}")
def test_shallow_narrow_type_loops_are_fused(case, rng):
    """bfloat16 / float16 / int8 loops of shallow GEMMs become one GEMM over all of k: values against
    numpy in float64 (int8: exactly, and bit for bit the loop's), one call in the emitted C++."""
    dtype, acc, M, N, K, (bm, bn, bk), tb = case
    prog = kernel(M, N, K, bm, bn, bk, tb=tb, dtype=dtype, acc=acc)
    fused = tilelang.compile(prog, target="cpu", pass_configs=SINGLE_BLOCKS)
    loop = tilelang.compile(prog, target="cpu", pass_configs={**SINGLE_BLOCKS, **UNFUSED})
    a, b = operands(M, N, K, False, tb, dtype, rng)
    np_acc = np.int32 if acc == "int32" else np.float32
    c1, c2 = np.full((M, N), 7, np_acc), np.full((M, N), 7, np_acc)
    fused(a, b, c1)
    loop(a, b, c2)
    ref = reference(a, b, False, tb)
    if dtype == "int8":
        np.testing.assert_array_equal(c1.astype(np.int64), ref.astype(np.int64))
        np.testing.assert_array_equal(c1, c2)
    else:  # products of two bf16 / fp16 values are exact in float32; float32 sums of K of them
        np.testing.assert_allclose(c1, ref, rtol=0, atol=4e-6 * K)
        np.testing.assert_allclose(c2, ref, rtol=0, atol=4e-6 * K)
    assert gemm_calls(fused.get_kernel_source()) == [(str(bm), str(bn), str(K), "false", str(tb).lower())]
    assert gemm_calls(loop.get_kernel_source()) == [(str(bm), str(bn), str(bk), "false", str(tb).lower())]


@pytest.mark.parametrize("variant", ["extra_statement", "clear_every_iteration", "partial_tiles", "deep_bfloat16",
                                     "deep_int8"])
def test_loops_that_stay_loops(variant, rng):
    """Not fused: a loop body with more than the GEMM, a GEMM that clears C on every iteration (only
    the last k tile counts), partial tiles (the staging copies stay: they zero-fill), and bf16 / int8
    GEMMs deeper than 256 bytes per iteration (the AMX / dot-product drivers were tuned for those
    per-call chunks: the cpu configurations' 512 x 512 x 256 / 512). Values still match numpy."""
    M, N, K, bm, bn, bk = 64, 64, 256, 32, 32, 64
    dtype, acc = "float32", "float32"
    kw = {}
    if variant == "extra_statement":
        kw["extra"] = True
    elif variant == "clear_every_iteration":
        kw["every_iteration_clear"] = True
    elif variant == "partial_tiles":
        M, N, K = 60, 50, 250
    elif variant == "deep_bfloat16":
        dtype, K, bk = "bfloat16", 512, 256
    else:
        dtype, acc, K, bk = "int8", "int32", 1024, 512
    k = tilelang.compile(kernel(M, N, K, bm, bn, bk, dtype=dtype, acc=acc, **kw), target="cpu", pass_configs=SINGLE_BLOCKS)
    a, b = operands(M, N, K, False, False, dtype, rng)
    c = np.zeros((M, N), np.int32 if acc == "int32" else np.float32)
    k(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if variant == "extra_statement":  # C = ((A0 B0) / 2 + A1 B1) / 2 + ... over the k tiles
        ref = np.zeros((M, N))
        for k0 in range(0, K, bk):
            ref = (ref + a64[:, k0:k0 + bk] @ b64[k0:k0 + bk]) * 0.5
    elif variant == "clear_every_iteration":
        ref = a64[:, K - bk:] @ b64[K - bk:]
    else:
        ref = a64 @ b64
    tol = (2e-6 if dtype == "float32" else 1e-5) * K
    np.testing.assert_allclose(c, ref, rtol=0, atol=tol)
    calls = gemm_calls(k.get_kernel_source())
    assert calls and all(c[2] == str(bk) for c in calls), calls
