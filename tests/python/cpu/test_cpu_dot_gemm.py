"""bf16 and int8 T.gemm on cpu through the dot-product driver of include/tl/cpu/gemm.h (gemm_dot:
vdpbf16ps with AVX512_BF16, vpdpbusd with AVX512_VNNI, where the CPU has them and has no AMX for the
dtype), against numpy in float64 / int64 on random inputs, and against the same kernel capped to
`tl.cpu_isa = avx512` (no BF16 / VNNI instructions: the plain multiply-add path). The shapes cover the
driver's edges: row tails of the 6-row micro-kernel, column tails (whole vectors and a partial one
through a temporary), k not a whole number of 4-byte groups (an odd K for bf16, K % 4 != 0 for
int8), several k chunks (bf16 256, int8 512) and column chunks (512), transposed A and B, and C
accumulated onto. int8 also at the extremes (-128 x -128 and -128 x 127 on every term: the unsigned
B + 128 of vpdpbusd and the row-sum correction must cancel exactly)."""
import ctypes
import os

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T


from host_cpu import cpu_flags  # noqa: E402  (tests/python, put on sys.path by conftest.py)


FLAGS = cpu_flags()
HAS_AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx2", "fma"} <= FLAGS


def gemm(M, N, K, bm, bn, bk, dtype, acc, ta, tb, accumulate):
    A_shape, B_shape = ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N))
    A_tile, B_tile = ((bk, bm) if ta else (bm, bk)), ((bn, bk) if tb else (bk, bn))

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared(A_tile, dtype)
            B_s = T.alloc_shared(B_tile, dtype)
            C_l = T.alloc_fragment((bm, bn), acc)
            if accumulate:
                T.copy(C[by * bm, bx * bn], C_l)
            else:
                T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                if ta:
                    T.copy(A[k * bk, by * bm], A_s)
                else:
                    T.copy(A[by * bm, k * bk], A_s)
                if tb:
                    T.copy(B[bx * bn, k * bk], B_s)
                else:
                    T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l, transpose_A=ta, transpose_B=tb)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def kernel_isa(k):
    lib = ctypes.CDLL(os.path.join(k.artifact_dir, "kernel.so"))
    lib.tl_kernel_isa.restype = ctypes.c_char_p
    return lib.tl_kernel_isa().decode()


# M, N, K, (block_M, block_N, block_K), dtype, trans_A, trans_B
CASES = [
    (70, 50, 90, (70, 50, 90), "int8", False, False),      # 4-row tail, partial vector, K % 4 == 2
    (64, 96, 256, (64, 96, 256), "int8", False, True),     # B transposed: 16 x 16 group transposes
    (37, 80, 131, (37, 80, 131), "int8", True, False),     # A transposed, K % 4 == 3
    (48, 130, 200, (48, 130, 200), "int8", True, True),
    (30, 600, 1100, (30, 600, 1100), "int8", False, False),  # k chunks 512 + 512 + 76, columns 512 + 88
    (64, 64, 256, (32, 32, 64), "int8", False, False),      # a k loop of 64-deep calls, C reloaded
    (13, 40, 77, (13, 40, 77), "bfloat16", False, False),  # odd K: a zero pair half
    (64, 48, 160, (64, 48, 160), "bfloat16", False, True),
    (29, 70, 96, (29, 70, 96), "bfloat16", True, True),
    (20, 530, 600, (20, 530, 600), "bfloat16", False, False),  # k chunks 256 + 256 + 88, columns 512 + 18
    (64, 128, 64, (64, 128, 64), "bfloat16", False, False),  # attention's P V shape
    (64, 64, 128, (64, 64, 128), "bfloat16", False, True),   # attention's Q K^T shape
]


def operands(M, N, K, dtype, ta, tb, rng):
    sa, sb = ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N))
    if dtype == "int8":
        return rng.integers(-128, 128, sa).astype(np.int8), rng.integers(-128, 128, sb).astype(np.int8)
    return (rng.uniform(-2, 2, sa).astype(np.float32).astype(ml_dtypes.bfloat16),
            rng.uniform(-2, 2, sb).astype(np.float32).astype(ml_dtypes.bfloat16))


def reference(a, b, ta, tb, wide):
    a, b = a.astype(wide), b.astype(wide)
    return (a.T if ta else a) @ (b.T if tb else b)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[4]}-{c[0]}x{c[1]}x{c[2]}-tA{int(c[5])}-tB{int(c[6])}")
@pytest.mark.parametrize("accumulate", [False, True], ids=["clear", "accumulate"])
def test_dot_gemm_matches_numpy(case, accumulate, rng):
    M, N, K, (bm, bn, bk), dtype, ta, tb = case
    acc = "int32" if dtype == "int8" else "float32"
    prog = gemm(M, N, K, bm, bn, bk, dtype, acc, ta, tb, accumulate)
    a, b = operands(M, N, K, dtype, ta, tb, rng)
    wide = np.int64 if dtype == "int8" else np.float64
    ref = reference(a, b, ta, tb, wide)
    c0 = (rng.integers(-1000, 1000, (M, N)) if dtype == "int8" else rng.uniform(-1, 1, (M, N))).astype(acc)
    if accumulate:
        ref = ref + c0.astype(wide)
    results = {}
    for cap in ("native", "avx512"):
        if cap == "avx512" and not HAS_AVX512:
            continue
        k = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_isa": cap})
        c = c0.copy()
        k(a, b, c)
        if dtype == "int8":
            np.testing.assert_array_equal(c.astype(np.int64), ref)  # exact (no int32 overflow here)
        else:
            np.testing.assert_allclose(c, ref, rtol=0, atol=2e-5 * K)
        results[cap] = (c, kernel_isa(k))
    if dtype == "int8" and "avx512" in results:
        np.testing.assert_array_equal(results["native"][0], results["avx512"][0])
    if "avx512" in results:
        assert "vnni" not in results["avx512"][1] and "bf16" not in results["avx512"][1]


@pytest.mark.parametrize("values", [(-128, -128), (-128, 127), (127, -128)], ids=["min-min", "min-max", "max-min"])
def test_dot_gemm_int8_extremes(values, rng):
    """Every product at the int8 extremes (K = 1024: |C| = 2^24, within int32): exact."""
    M, N, K = 24, 64, 1024
    prog = gemm(M, N, K, M, N, K, "int8", "int32", False, False, False)
    a = np.full((M, K), values[0], np.int8)
    b = np.full((K, N), values[1], np.int8)
    b[:, ::3] = rng.integers(-128, 128, (K, b[:, ::3].shape[1]))  # mixed columns too
    c = np.zeros((M, N), np.int32)
    tilelang.compile(prog, target="cpu")(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.skipif(not HAS_AVX512, reason="needs AVX-512")
def test_dot_instructions_are_picked_where_the_cpu_has_them():
    """The kernel's tier names the dot-product instructions the CPU has (vpdpbusd with AVX512_VNNI,
    vdpbf16ps with AVX512_BF16), and none under the avx512 cap."""
    prog = gemm(32, 64, 128, 32, 64, 128, "int8", "int32", False, False, False)
    tier = kernel_isa(tilelang.compile(prog, target="cpu"))
    assert ("vnni" in tier) == ("avx512_vnni" in FLAGS), tier
    assert ("bf16" in tier) == ("avx512_bf16" in FLAGS), tier
    capped = kernel_isa(tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_isa": "avx512"}))
    assert capped == "avx512", capped
