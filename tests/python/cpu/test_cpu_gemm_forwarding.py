"""forward_gemm_operands (src/target/cpu/forward_gemm_operands.h): on cpu, T.gemm reads a global
tile in place instead of the shared-memory copy that only feeds it. Checked against numpy in
float64 (int64) on random inputs, against the same kernel with the copies kept
(tl.disable_cpu_gemm_forwarding: bit for bit, the GEMM's summation order does not depend on where
its operands live), and on the emitted C++ (which copies are gone, which are kept)."""
import os
import re
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

# The kernels keep their own blocks (coarsen_gemm_blocks would merge neighbouring one-GEMM blocks
# of a large enough grid, by the host's core count): these tests check each block's GEMM call.
SINGLE_BLOCKS = {"tl.disable_cpu_block_coarsening": True}

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402

KEEP = {"tl.disable_cpu_gemm_forwarding": True}


def stores_to(src, name):
    """Whether the emitted C++ stores into buffer `name` (its declaration does not count)."""
    return re.search(name + r"\[[^\]]*\] = ", src) is not None


def operand(shape, dtype, rng):
    if dtype == "int8":
        return rng.integers(-100, 100, shape).astype(np.int8)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    return x.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else x


def reference(a, b, ta, tb, wide):
    a, b = a.astype(wide), b.astype(wide)
    return (a.T if ta else a) @ (b.T if tb else b)


# M, N, K, blocks, dtype, acc, trans_A, trans_B, forwarded (A, B)
CASES = [
    (256, 192, 128, (64, 96, 32), "float32", "float32", False, False, (True, True)),
    (192, 128, 96, (96, 64, 48), "float32", "float32", False, True, (True, True)),   # B [N, K]
    (128, 96, 64, (64, 48, 32), "float32", "float32", True, False, (True, True)),    # A [K, M]
    (1, 512, 256, (1, 128, 64), "float32", "float32", False, False, (True, True)),   # decode GEMV
    # partial tiles: the copies stay for the edge tiles (see test_dynamic_shape_gemm_reads_global_tiles_in_bounds)
    (100, 72, 50, (32, 32, 16), "float32", "float32", False, False, (False, False)),
    (128, 128, 128, (64, 64, 64), "bfloat16", "float32", False, False, (True, True)),
    (64, 64, 128, (32, 32, 64), "int8", "int32", False, True, (True, True)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[4]}-{c[0]}x{c[1]}x{c[2]}-tA{int(c[6])}-tB{int(c[7])}")
def test_forwarded_gemm_matches_numpy_and_the_copying_kernel(case, rng):
    M, N, K, (bm, bn, bk), dtype, acc, ta, tb, (fwd_a, fwd_b) = case
    prog = zoo.gemm(M, N, K, bm, bn, bk, dtype, acc, acc, trans_A=ta, trans_B=tb)
    a = operand((K, M) if ta else (M, K), dtype, rng)
    b = operand((N, K) if tb else (K, N), dtype, rng)
    fast = tilelang.compile(prog, target="cpu", pass_configs=SINGLE_BLOCKS)
    kept = tilelang.compile(prog, target="cpu", pass_configs={**SINGLE_BLOCKS, **KEEP})
    c1, c2 = np.zeros((M, N), acc), np.zeros((M, N), acc)
    fast(a, b, c1)
    kept(a, b, c2)
    if dtype == "int8":
        np.testing.assert_array_equal(c1.astype(np.int64), reference(a, b, ta, tb, np.int64))
    else:
        np.testing.assert_allclose(c1, reference(a, b, ta, tb, np.float64), rtol=0, atol=2e-6 * K)
    np.testing.assert_array_equal(c1, c2)
    src, src_kept = fast.get_kernel_source(), kept.get_kernel_source()
    assert stores_to(src_kept, "A_shared") and stores_to(src_kept, "B_shared")
    assert (not stores_to(src, "A_shared")) == fwd_a, src[src.find("_block("):][:3000]
    assert (not stores_to(src, "B_shared")) == fwd_b, src[src.find("_block("):][:3000]


def test_shared_tile_with_another_reader_is_kept(rng):
    """A_shared is also copied out: the copy stays (the GEMM still reads it) and values are right."""
    M = N = K = 64
    bm = bn = bk = 32

    @T.prim_func
    def f(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32"),
          D: T.Tensor((M, K), "float32")):
        with T.Kernel(N // bn, M // bm, threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), "float32")
            B_shared = T.alloc_shared((bk, bn), "float32")
            C_local = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_local)
            for k in T.Pipelined(K // bk, num_stages=1):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
                T.copy(A_shared, D[by * bm, k * bk])
            T.copy(C_local, C[by * bm, bx * bn])

    kernel = tilelang.compile(f, target="cpu", pass_configs=SINGLE_BLOCKS)
    a, b = operand((M, K), "float32", rng), operand((K, N), "float32", rng)
    c, d = np.zeros((M, N), np.float32), np.zeros((M, K), np.float32)
    kernel(a, b, c, d)
    np.testing.assert_allclose(c, reference(a, b, False, False, np.float64), rtol=0, atol=1e-4)
    np.testing.assert_array_equal(d, a)
    src = kernel.get_kernel_source()
    assert stores_to(src, "A_shared") and not stores_to(src, "B_shared")


def test_written_global_is_not_forwarded(rng):
    """The kernel writes A (C = A @ B, then A += 1 in place): A's copy must stay, since another
    block may already have changed A."""
    M = N = K = 64
    bm = bn = bk = 32

    @T.prim_func
    def f(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // bn, M // bm, threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), "float32")
            B_shared = T.alloc_shared((bk, bn), "float32")
            C_local = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_local)
            for k in T.Pipelined(K // bk, num_stages=1):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * bm, bx * bn])
        with T.Kernel(1, threads=1) as bx:
            for i, j in T.Parallel(M, K):
                A[i, j] = A[i, j] + 1.0

    kernel = tilelang.compile(f, target="cpu", pass_configs=SINGLE_BLOCKS)
    a, b = operand((M, K), "float32", rng), operand((K, N), "float32", rng)
    a0 = a.copy()
    c = np.zeros((M, N), np.float32)
    kernel(a, b, c)
    np.testing.assert_allclose(c, reference(a0, b, False, False, np.float64), rtol=0, atol=1e-4)
    np.testing.assert_array_equal(a, a0 + 1)
    src = kernel.get_kernel_source()
    assert stores_to(src, "A_shared") and not stores_to(src, "B_shared")


def clear_kernel(M, N, K, bm, bn, bk, fill_value=0.0, read_before=False, dynamic_k=False):
    """C = A @ B with C_local filled before the K loop (T.clear, or T.fill with fill_value);
    read_before: each iteration first copies C_local out (so the fill is visible there);
    dynamic_k: the loop's trip count is a run-time scalar (possibly 0)."""
    @T.prim_func
    def f(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32"),
          D: T.Tensor((M, N), "float32"), nk: T.int32):
        with T.Kernel(N // bn, M // bm, threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), "float32")
            B_shared = T.alloc_shared((bk, bn), "float32")
            C_local = T.alloc_fragment((bm, bn), "float32")
            if fill_value == 0.0:
                T.clear(C_local)
            else:
                T.fill(C_local, fill_value)
            for k in T.Pipelined(nk if dynamic_k else K // bk, num_stages=1):
                if read_before:
                    T.copy(C_local, D[by * bm, bx * bn])
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * bm, bx * bn])
    return f


def test_clear_before_the_k_loop_becomes_the_first_gemms_clear(rng):
    """T.clear(C_local) before the K loop: the fill is gone and the GEMM clears on k == 0 (AMX
    starts from zero tiles); values match numpy and, bit for bit, the kernel without the rewrite."""
    M, N, K, bm, bn, bk = 128, 96, 192, 64, 48, 64
    prog = clear_kernel(M, N, K, bm, bn, bk)
    # without the k-loop fusion (tests/python/cpu/test_cpu_gemm_k_fusion.py), which would take the loop
    fast = tilelang.compile(prog, target="cpu", pass_configs={**SINGLE_BLOCKS, "tl.disable_cpu_gemm_k_fusion": True})
    kept = tilelang.compile(prog, target="cpu", pass_configs={**SINGLE_BLOCKS, **KEEP})
    a, b = operand((M, K), "float32", rng), operand((K, N), "float32", rng)
    c1, c2, d = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
    fast(a, b, c1, d, K // bk)
    kept(a, b, c2, d, K // bk)
    np.testing.assert_allclose(c1, reference(a, b, False, False, np.float64), rtol=0, atol=2e-6 * K)
    np.testing.assert_array_equal(c1, c2)
    src, src_kept = fast.get_kernel_source(), kept.get_kernel_source()
    # the clear argument, then the launch token of packed-B reuse (test_cpu_gemm_pack_reuse.py)
    assert not stores_to(src, "C_local") and "k == 0, pack_launch);" in src, src[src.find("_block("):][:3000]
    assert stores_to(src_kept, "C_local")


@pytest.mark.parametrize("variant", ["fill_one", "read_before", "dynamic_k"])
def test_clear_stays_where_the_gemm_cannot_take_it(variant, rng):
    """The fill stays when it is not +0, when the loop reads C_local before the GEMM, or when the
    loop may run zero times (then C must still be the fill value)."""
    M, N, K, bm, bn, bk = 64, 64, 128, 32, 32, 64
    prog = clear_kernel(M, N, K, bm, bn, bk, fill_value=1.0 if variant == "fill_one" else 0.0,
                        read_before=variant == "read_before", dynamic_k=variant == "dynamic_k")
    kernel = tilelang.compile(prog, target="cpu", pass_configs=SINGLE_BLOCKS)
    a, b = operand((M, K), "float32", rng), operand((K, N), "float32", rng)
    c, d = np.full((M, N), 7, np.float32), np.full((M, N), 7, np.float32)
    start = 1.0 if variant == "fill_one" else 0.0
    kernel(a, b, c, d, K // bk)
    np.testing.assert_allclose(c, start + reference(a, b, False, False, np.float64), rtol=0, atol=2e-6 * K)
    if variant == "read_before":  # the last iteration copies out the sum over all but the last k tile
        np.testing.assert_allclose(d, reference(a[:, :K - bk], b[:K - bk], False, False, np.float64), rtol=0,
                                   atol=2e-6 * K)
    if variant == "dynamic_k":
        kernel(a, b, c, d, 0)
        np.testing.assert_array_equal(c, np.zeros((M, N), np.float32))
    assert stores_to(kernel.get_kernel_source(), "C_local")


def test_clear_right_before_a_gemm_in_every_iteration_becomes_its_clear(rng):
    """Attention's scores: T.clear(S) directly before T.gemm(Q, K_j, S) in every KV iteration, S
    then used and summed into O. The fill goes and the GEMM clears S itself (clear_accum = true);
    values match numpy and, bit for bit, the kernel without the rewrite."""
    M, N, D, bm, bn = 64, 256, 64, 32, 64

    @T.prim_func
    def f(Q: T.Tensor((M, D), "float32"), Kt: T.Tensor((N, D), "float32"), O: T.Tensor((M, D), "float32")):
        with T.Kernel(M // bm, threads=128) as bx:
            Q_shared = T.alloc_shared((bm, D), "float32")
            K_shared = T.alloc_shared((bn, D), "float32")
            S = T.alloc_fragment((bm, bn), "float32")
            acc = T.alloc_fragment((bm, D), "float32")
            T.copy(Q[bx * bm, 0], Q_shared)
            T.clear(acc)
            for j in T.Pipelined(N // bn, num_stages=1):
                T.copy(Kt[j * bn, 0], K_shared)
                T.clear(S)
                T.gemm(Q_shared, K_shared, S, transpose_B=True)
                for i, k in T.Parallel(bm, bn):
                    S[i, k] = S[i, k] * 0.5
                T.gemm(S, K_shared, acc)
            T.copy(acc, O[bx * bm, 0])

    fast = tilelang.compile(f, target="cpu", pass_configs=SINGLE_BLOCKS)
    kept = tilelang.compile(f, target="cpu", pass_configs={**SINGLE_BLOCKS, **KEEP})
    q, kt = operand((M, D), "float32", rng), operand((N, D), "float32", rng)
    o1, o2 = np.zeros((M, D), np.float32), np.zeros((M, D), np.float32)
    fast(q, kt, o1)
    kept(q, kt, o2)
    q64, k64 = q.astype(np.float64), kt.astype(np.float64)
    np.testing.assert_allclose(o1, 0.5 * (q64 @ k64.T) @ k64, rtol=0, atol=1e-5 * N * D)
    np.testing.assert_array_equal(o1, o2)
    zero_fill = re.compile(r"\bS\[[^\]]*\] = 0\.0f;")
    assert not zero_fill.search(fast.get_kernel_source()) and zero_fill.search(kept.get_kernel_source())


def _dynamic_gemm(A, B, block_M, block_N, block_K, trans_A, trans_B, dtype, accum_dtype):
    """example_dynamic's kernel (TileLang's examples/dynamic_shape), written here: M, N, K are
    run-time dimensions, so no tile is known to lie inside A or B at compile time."""
    M, N, K = T.dynamic("m"), T.dynamic("n"), T.dynamic("k")
    A: T.Tensor((K, M) if trans_A else (M, K), dtype)
    B: T.Tensor((N, K) if trans_B else (K, N), dtype)
    C = T.empty((M, N), accum_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_K, block_M) if trans_A else (block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_N, block_K) if trans_B else (block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            if trans_A:
                T.copy(A[k * block_K, by * block_M], A_shared)
            else:
                T.copy(A[by * block_M, k * block_K], A_shared)
            if trans_B:
                T.copy(B[bx * block_N, k * block_K], B_shared)
            else:
                T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, trans_A, trans_B)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


# target="cpu": on a machine with a GPU the default target is cuda
dynamic_gemm = tilelang.jit(target="cpu")(_dynamic_gemm)
dynamic_gemm_kept = tilelang.jit(target="cpu", pass_configs={**SINGLE_BLOCKS, **KEEP})(_dynamic_gemm)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False)])
def test_dynamic_shape_gemm_reads_global_tiles_in_bounds(dtype, ta, tb, rng):
    """With run-time M, N, K a copy's guards cannot be dropped at compile time: the GEMM reads the
    global tiles whenever all of them lie inside A and B (checked per tile at run time) and the
    guarded copies fill the shared tiles otherwise (the edge tiles). One compiled kernel, shapes
    with and without partial tiles: values against numpy (float64) and, bit for bit, against the
    kernel with the copies kept (tl.disable_cpu_gemm_forwarding)."""
    bm, bn, bk = 32, 48, 16
    fast = dynamic_gemm.compile(None, None, bm, bn, bk, ta, tb, dtype, "float32")
    kept = dynamic_gemm_kept.compile(None, None, bm, bn, bk, ta, tb, dtype, "float32")
    src = fast.get_kernel_source()
    direct = re.search(r"tl::cpu::gemm<[^>]*>\(\(A \+", src)
    assert direct and stores_to(src, "A_shared"), src[src.find("_block("):][:4000]
    np_dtype = np.float16 if dtype == "float16" else np.float32
    for M, N, K in [(96, 144, 64), (100, 150, 70), (7, 5, 3), (64, 48, 17)]:
        a = rng.uniform(-1, 1, (K, M) if ta else (M, K)).astype(np_dtype)
        b = rng.uniform(-1, 1, (N, K) if tb else (K, N)).astype(np_dtype)
        c, c_kept = (np.asarray(x) for x in (fast(a, b), kept(a, b)))
        assert c.shape == (M, N)
        np.testing.assert_allclose(c, reference(a, b, ta, tb, np.float64), rtol=0, atol=2e-6 * K)
        np.testing.assert_array_equal(c, c_kept)
