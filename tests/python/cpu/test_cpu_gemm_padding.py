"""pad_gemm_accumulators (src/target/cpu/pad_gemm_accumulators.h): the block-local accumulator of a
bf16 / fp16 / int8 T.gemm whose rows are a multiple of 1 KiB long gets a row stride 64 bytes longer, so the
AMX C tiles do not alias L1 sets. The padded kernels are checked against numpy in float64 / int64 on
random inputs, with an epilogue that reads the accumulator element by element (T.Parallel) and by
rows (T.reduce), against the same kernel with tl.disable_cpu_gemm_padding (bit-equal: the padding
changes addresses, not the order of any sum), under the lower ISA tiers forced with tl.cpu_isa (the
pass does not depend on the tier), and on the emitted C++ (the padded leading dimension is there,
or, where the pass must not apply, not)."""

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

OFF = {"tl.disable_cpu_gemm_padding": True}


def gemm_epilogue(M, N, K, bm, bn, bk, dtype, acc):
    """C = A @ B + 1 through C_local (T.Parallel reads and writes it), and R = row sums of C_local
    (T.reduce_sum over its rows)."""

    @T.prim_func
    def k(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), acc),
          R: T.Tensor((M, N // bn), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_local = T.alloc_fragment((bm, bn), acc)
            r = T.alloc_fragment((bm,), acc)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_local)
            for i, j in T.Parallel(bm, bn):
                C_local[i, j] = C_local[i, j] + T.cast(1, acc)
            T.reduce_sum(C_local, r, dim=1)
            for i in T.Parallel(bm):
                R[by * bm + i, bx] = r[i]
            T.copy(C_local, C[by * bm, bx * bn])

    return k


def operands(M, N, K, dtype, rng):
    if dtype == "int8":
        return rng.integers(-128, 128, (M, K)).astype(np.int8), rng.integers(-128, 128, (K, N)).astype(np.int8)
    narrow = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    a = rng.uniform(-2, 2, (M, K)).astype(np.float32).astype(narrow)
    b = rng.uniform(-2, 2, (K, N)).astype(np.float32).astype(narrow)
    return a, b


# (M, N, K, blocks, dtype, acc, padded leading dimension): fp32 / int32 rows of 1 KiB (256) and
# 2 KiB (512), padded by 16 elements; float16 as two bfloat16 on the same tiles (the tile path at
# 512 rows and 2^22 multiply-adds a call, the first fp16 case)
CASES = [
    (128, 512, 128, (64, 256, 64), "bfloat16", "float32", 272),
    (64, 1024, 256, (32, 512, 128), "bfloat16", "float32", 528),
    (512, 512, 256, (512, 256, 128), "float16", "float32", 272),
    (64, 512, 256, (32, 256, 128), "float16", "float32", 272),
    (96, 512, 256, (48, 256, 128), "int8", "int32", 272),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[4]}-{c[0]}x{c[1]}x{c[2]}")
@pytest.mark.parametrize("cap", ["native", "avx512", "avx2", "portable"])
def test_padded_accumulator_matches_numpy(case, cap, rng):
    M, N, K, (bm, bn, bk), dtype, acc, ld = case
    a, b = operands(M, N, K, dtype, rng)
    wide = np.int64 if dtype == "int8" else np.float64
    ref = a.astype(wide) @ b.astype(wide) + 1
    ref_r = ref.reshape(M, N // bn, bn).sum(axis=2)
    out = {}
    for name, cfg in (("padded", {}), ("dense", OFF)):
        kernel = tilelang.compile(gemm_epilogue(M, N, K, bm, bn, bk, dtype, acc), target="cpu",
                                  pass_configs={"tl.cpu_isa": cap, **cfg})
        src = kernel.get_kernel_source()
        assert (f"int64_t({ld}LL)" in src) == (name == "padded"), f"{name}: leading dimension {ld} in the source"
        c = np.full((M, N), 7, acc)
        r = np.full((M, N // bn), 7, acc)
        kernel(a, b, c, r)
        out[name] = (c, r)
        if dtype == "int8":  # exact (int32 does not wrap for these magnitudes)
            np.testing.assert_array_equal(c, ref)
            np.testing.assert_array_equal(r, ref_r)
        else:  # products of bf16 are exact in fp32; K terms of |x| <= 4 summed in fp32
            np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-3 * np.sqrt(K))
            np.testing.assert_allclose(r, ref_r, rtol=1e-4, atol=1e-2 * np.sqrt(K * bn))
    np.testing.assert_array_equal(out["padded"][0], out["dense"][0])
    np.testing.assert_array_equal(out["padded"][1], out["dense"][1])


def plain_gemm(M, N, K, bm, bn, bk, dtype, acc):
    @T.prim_func
    def k(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            C_local = T.alloc_fragment((bm, bn), acc)
            T.clear(C_local)
            for ko in T.serial(T.ceildiv(K, bk)):
                T.gemm(A[by * bm:(by + 1) * bm, ko * bk:(ko + 1) * bk], B[ko * bk:(ko + 1) * bk, bx * bn:(bx + 1) * bn],
                       C_local)
            T.copy(C_local, C[by * bm, bx * bn])

    return k


@pytest.mark.parametrize("case", [
    (64, 256, 64, (32, 256, 64), "float32", "float32"),    # fp32 GEMM: its C access is not tile-shaped
    (64, 192, 64, (32, 192, 64), "bfloat16", "float32"),   # rows of 768 bytes: no set aliasing
], ids=["fp32", "bf16-768B-rows"])
def test_not_padded(case, rng):
    M, N, K, (bm, bn, bk), dtype, acc = case
    kernel = tilelang.compile(plain_gemm(M, N, K, bm, bn, bk, dtype, acc), target="cpu")
    assert f"int64_t({bn}LL), " in kernel.get_kernel_source() and f"int64_t({bn + 16}LL)" not in kernel.get_kernel_source()
    if dtype == "float32":
        a, b = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    else:
        a, b = operands(M, N, K, dtype, rng)
    c = np.empty((M, N), np.float32)
    kernel(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_padded_with_staging_copies_and_fill(rng):
    """With tl.disable_cpu_gemm_forwarding the shared copies and the T.clear stay: the fill of the
    padded accumulator (its loop form over the strides) and the GEMM on shared tiles, exact."""
    M, N, K, bm, bn, bk = 96, 512, 256, 48, 256, 128
    prog = gemm_epilogue(M, N, K, bm, bn, bk, "int8", "int32")
    kernel = tilelang.compile(prog, target="cpu", pass_configs={"tl.disable_cpu_gemm_forwarding": True})
    assert "int64_t(272LL)" in kernel.get_kernel_source()
    a, b = operands(M, N, K, "int8", rng)
    c = np.full((M, N), 7, np.int32)
    r = np.full((M, N // bn), 7, np.int32)
    kernel(a, b, c, r)
    ref = a.astype(np.int64) @ b.astype(np.int64) + 1
    np.testing.assert_array_equal(c, ref)
    np.testing.assert_array_equal(r, ref.reshape(M, N // bn, bn).sum(axis=2))


def test_padded_global_operand_gemm(rng):
    """The bench's kernel form (operands read from the global tiles, the clear folded into the GEMM)
    with a 2 KiB-row int8 accumulator: padded, exact."""
    M, N, K, bm, bn, bk = 64, 512, 256, 32, 512, 128
    kernel = tilelang.compile(plain_gemm(M, N, K, bm, bn, bk, "int8", "int32"), target="cpu")
    assert "int64_t(528LL)" in kernel.get_kernel_source()
    a, b = operands(M, N, K, "int8", rng)
    c = np.empty((M, N), np.int32)
    kernel(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
