"""Packed-B reuse across the GEMM calls of one launch (include/tl/cpu/gemm.h, "packed B reused
across the calls of one launch"; docs/TARGET_CPU.md): a T.gemm whose B is a tensor parameter that no
statement of the function writes passes the launch's token (`pack_launch`), and the header keeps B's
pack per thread for the launch's later calls with the same B. Checked against numpy in float64 (int8:
exact) on random inputs, with one and two threads, every ISA tier forced with tl.cpu_isa; across
launches with B rewritten in place between them; and the safety rule: a kernel that writes B between
two GEMMs of one launch gets no token (its second GEMM sees the new B), nor does a launch whose
written tensor overlaps B in memory (the same array passed as B and C)."""

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

# The kernels keep their own blocks (coarsen_gemm_blocks would merge neighbouring one-GEMM blocks
# of a large enough grid, by the host's core count): these tests check each block's GEMM call.
SINGLE_BLOCKS = {"tl.disable_cpu_block_coarsening": True}

TOKEN = "pack_launch);"  # a tl::cpu::gemm call given the launch's token


def tiled_gemm(M, N, K, bm, bn, bk, dtype, acc, out=None):
    """TileLang's GEMM example: the blocks of a grid column share their B tiles. C is `out`
    (default: the accumulator's dtype)."""
    @T.prim_func
    def f(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), out or acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), dtype)
            B_shared = T.alloc_shared((bk, bn), dtype)
            C_local = T.alloc_fragment((bm, bn), acc)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * bm, bx * bn])
    return f


def operands(M, N, K, dtype, rng):
    if dtype == "int8":
        return (rng.integers(-128, 128, (M, K)).astype(np.int8), rng.integers(-128, 128, (K, N)).astype(np.int8))
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    if dtype == "bfloat16":
        a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    return a, b


def check(c, a, b, dtype):
    if dtype == "int8":
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    else:
        K = a.shape[1]
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c, ref, rtol=0, atol=(2e-6 if dtype == "float32" else 1e-5) * K)


# M, N, K, blocks, dtype: fp32 (k loop fused: one call per block, k chunks of 256 with a tail; its
# blocked driver ignores the token, the values must still hold),
# bf16 / int8 (one call per k step: one cached pack per step and B column), bf16 launches with 40
# B packs per thread and with 288 (more than the cache's 256 entries and its 8 MiB: evictions), a
# column tail of B (N % 64 != 0)
CASES = [
    (512, 256, 300, (128, 128, 32), "float32", "float32"),
    (384, 192, 512, (192, 96, 128), "float32", "float32"),
    (512, 256, 512, (128, 128, 128), "bfloat16", "float32"),
    (256, 256, 2560, (128, 128, 128), "bfloat16", "float32"),
    (256, 256, 18432, (128, 128, 128), "bfloat16", "float32"),
    (512, 256, 512, (128, 128, 256), "int8", "int32"),
    (384, 200, 512, (128, 200, 128), "bfloat16", "float32"),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[4]}-{c[0]}x{c[1]}x{c[2]}")
def test_reused_packs_match_numpy(case, threads, rng):
    M, N, K, (bm, bn, bk), dtype, acc = case
    kernel = tilelang.compile(tiled_gemm(M, N, K, bm, bn, bk, dtype, acc), target="cpu",
                              pass_configs={**SINGLE_BLOCKS, "tl.cpu_num_threads": threads})
    assert TOKEN in kernel.get_kernel_source()
    a, b = operands(M, N, K, dtype, rng)
    for _ in range(2):  # a second launch: its own token, the same values
        c = np.full((M, N), 7, acc)
        kernel(a, b, c)
        check(c, a, b, dtype)


@pytest.mark.parametrize("cap", ["avx512", "avx2", "portable"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8"])
def test_lower_tiers(dtype, cap, rng):
    """The token reaches every tier's drivers (those without a cache ignore it)."""
    M, N, K, (bm, bn, bk) = 256, 128, 256, (128, 64, 128)
    acc = "int32" if dtype == "int8" else "float32"
    kernel = tilelang.compile(tiled_gemm(M, N, K, bm, bn, bk, dtype, acc), target="cpu",
                              pass_configs={**SINGLE_BLOCKS, "tl.cpu_isa": cap, "tl.cpu_num_threads": 2})
    a, b = operands(M, N, K, dtype, rng)
    c = np.zeros((M, N), acc)
    kernel(a, b, c)
    check(c, a, b, dtype)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8"])
def test_b_rewritten_between_launches(dtype, rng):
    """The same B array, rewritten in place between two launches (same address): the second launch
    must not use the first one's packs."""
    M, N, K, (bm, bn, bk) = 384, 128, 256, (128, 128, 128)
    acc = "int32" if dtype == "int8" else "float32"
    kernel = tilelang.compile(tiled_gemm(M, N, K, bm, bn, bk, dtype, acc), target="cpu",
                              pass_configs={**SINGLE_BLOCKS, "tl.cpu_num_threads": 1})
    a, b = operands(M, N, K, dtype, rng)
    c = np.zeros((M, N), acc)
    kernel(a, b, c)
    check(c, a, b, dtype)
    _, b2 = operands(M, N, K, dtype, rng)
    b[...] = b2
    kernel(a, b, c)
    check(c, a, b2, dtype)


def written_b_kernel(M, N, K, bn, dtype, acc):
    """Per block (one per column tile of B): C1 = A B[:, tile], then the tile of B doubled in place
    (int8: negated), then C2 = A B[:, tile] again: within one launch, the second GEMM must see the
    new B. The GEMMs read the tile of B in place (a region of the global tensor)."""
    @T.prim_func
    def f(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C1: T.Tensor((M, N), acc),
          C2: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), threads=128) as bx:
            A_shared = T.alloc_shared((M, K), dtype)
            C_local = T.alloc_fragment((M, bn), acc)
            T.copy(A[0, 0], A_shared)
            T.gemm(A_shared, B[0:K, bx * bn:(bx + 1) * bn], C_local, clear_accum=True)
            T.copy(C_local, C1[0, bx * bn])
            for k, j in T.Parallel(K, bn):
                if dtype == "int8":
                    B[k, bx * bn + j] = -B[k, bx * bn + j]
                else:
                    B[k, bx * bn + j] = B[k, bx * bn + j] * 2
            T.gemm(A_shared, B[0:K, bx * bn:(bx + 1) * bn], C_local, clear_accum=True)
            T.copy(C_local, C2[0, bx * bn])
    return f


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8"])
def test_b_written_in_the_launch_gets_no_token(dtype, threads, rng):
    M, N, K, bn = 128, 256, 256, 64
    acc = "int32" if dtype == "int8" else "float32"
    kernel = tilelang.compile(written_b_kernel(M, N, K, bn, dtype, acc), target="cpu",
                              pass_configs={**SINGLE_BLOCKS, "tl.cpu_num_threads": threads})
    a, b = operands(M, N, K, dtype, rng)
    b0 = b.copy()
    c1, c2 = np.zeros((M, N), acc), np.zeros((M, N), acc)
    kernel(a, b, c1, c2)
    b1 = -b0 if dtype == "int8" else (b0.astype(np.float32) * 2).astype(b0.dtype)
    np.testing.assert_array_equal(b, b1)
    check(c1, a, b0, dtype)
    check(c2, a, b1, dtype)
    src = kernel.get_kernel_source()
    assert src.count("tl::cpu::gemm<") == 2 and src.count("int64_t(256LL), (B + ") == 2, "the GEMMs read B in place"
    assert TOKEN not in src and ".pack_launch = 0;" in src


def test_b_overlapping_a_written_tensor_gets_token_zero(rng):
    """The same bf16 array as B and as the written C (K == M; C rounded to bf16 at the copy-out):
    block 0 (rows 0..127 of C) overwrites rows of B that block 1 then multiplies. One thread runs the
    blocks in order, so the result is defined: block 1 must see block 0's stores, which a pack
    reused from block 0 would not hold. The launch's overlap test gives the token 0 (no reuse)."""
    M = K = 256
    N, bm = 128, 128
    kernel = tilelang.compile(tiled_gemm(M, N, K, bm, N, 128, "bfloat16", "float32", "bfloat16"), target="cpu",
                              pass_configs={**SINGLE_BLOCKS, "tl.cpu_num_threads": 1})
    assert TOKEN in kernel.get_kernel_source()
    a, b = operands(M, N, K, "bfloat16", rng)
    buf = b.copy()
    kernel(a, buf, buf)  # B and C are one array
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    top = a64[:bm] @ b64
    b_after = b64.copy()
    b_after[:bm] = top.astype(ml_dtypes.bfloat16).astype(np.float64)  # block 0's stores
    bottom = a64[bm:] @ b_after
    got = buf.astype(np.float64)
    np.testing.assert_allclose(got[:bm], top, rtol=1e-2, atol=1e-2)  # one bf16 rounding
    np.testing.assert_allclose(got[bm:], bottom, rtol=1e-2, atol=1e-1)


def test_off_switch(rng):
    """tl.disable_cpu_gemm_pack_reuse: no token (B packed per call), the same values bit for bit."""
    M, N, K, (bm, bn, bk) = 384, 128, 512, (128, 64, 128)
    prog = tiled_gemm(M, N, K, bm, bn, bk, "bfloat16", "float32")
    on = tilelang.compile(prog, target="cpu", pass_configs=SINGLE_BLOCKS)
    off = tilelang.compile(prog, target="cpu", pass_configs={**SINGLE_BLOCKS, "tl.disable_cpu_gemm_pack_reuse": True})
    assert TOKEN in on.get_kernel_source() and TOKEN not in off.get_kernel_source() and ".pack_launch = 0;" in off.get_kernel_source()
    a, b = operands(M, N, K, "bfloat16", rng)
    c1, c2 = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
    on(a, b, c1)
    off(a, b, c2)
    check(c1, a, b, "bfloat16")
    np.testing.assert_array_equal(c1, c2)
