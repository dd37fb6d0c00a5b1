"""TileLang-style kernels (GPU idiom: threads=128, shared and fragment buffers) used by the cuda
tests and the GPU benchmarks (the GEMM, softmax, layer norm and flash attention builders are the shared
ones of tests/python/kernel_zoo.py). Each builder returns a @T.prim_func."""
import os
import sys

import tilelang.language as T

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32", out_dtype=None,
           num_stages=3, trans_A=False, trans_B=False, threads=128, swizzle_panel=0, policy=None, cluster=None):
    return zoo.gemm(M, N, K, block_M, block_N, block_K, dtype, accum_dtype, out_dtype, trans_A=trans_A, trans_B=trans_B,
                    num_stages=num_stages, threads=threads, swizzle_panel=swizzle_panel, policy=policy, cluster=cluster)


def matmul_dynamic_m(N, K, block_M=64, block_N=64, block_K=32, dtype="float16", num_stages=2):
    """C (float32) = A @ B over a dynamic number of rows m."""
    return zoo.gemm(T.dynamic("m"), N, K, block_M, block_N, block_K, dtype, "float32", "float32", num_stages=num_stages)


softmax = zoo.softmax


def rms_norm(M, N, blk_m=2, dtype="float32", eps=1e-6):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, N), dtype)
            A_local = T.alloc_fragment((blk_m, N), "float32")
            A_pow = T.alloc_fragment((blk_m, N), "float32")
            A_powsum = T.alloc_fragment((blk_m,), "float32")
            T.copy(A[bx * blk_m, 0], A_shared)
            T.copy(A_shared, A_local)
            for i, j in T.Parallel(blk_m, N):
                A_pow[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] = A_local[i, j] * A_powsum[i] * W[j]
            T.copy(A_local, B[bx * blk_m, 0])
    return main


layer_norm = zoo.layer_norm


def elementwise_add(M, N, block_M=32, block_N=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                if by * block_M + i < M and bx * block_N + j < N:
                    C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \
                        B[by * block_M + i, bx * block_N + j]
    return main


def elementwise_tiles(M, N, block_M=32, block_N=128, dtype="float16"):
    """Copies through fragments (vectorized), computes in registers: c = relu(a) * 2 + b."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a = T.alloc_fragment((block_M, block_N), dtype)
            b = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], a)
            T.copy(B[by * block_M, bx * block_N], b)
            for i, j in T.Parallel(block_M, block_N):
                a[i, j] = T.max(a[i, j], 0) * 2 + b[i, j]
            T.copy(a, C[by * block_M, bx * block_N])
    return main


def column_sum_shared(M, N, dtype="float32"):
    """reduce_sum over a shared tile, dim 0, plus reduce_max with clear=False, and cumsum."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), S: T.Tensor((N,), dtype), Mx: T.Tensor((N,), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, N), dtype)
            col = T.alloc_fragment((N,), dtype)
            mx = T.alloc_fragment((N,), dtype)
            T.copy(A, A_s)
            T.reduce_sum(A_s, col, dim=0)
            T.fill(mx, 0.5)
            T.reduce_max(A_s, mx, dim=0, clear=False)
            T.copy(col, S)
            T.copy(mx, Mx)
            T.cumsum(A_s, dim=0)
            T.copy(A_s, C)
    return main


def atomic_row_sums(M, N, block_M=16):
    """Each block adds its rows' sums into out[0:N] with T.atomic_add."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), "float32")
            part = T.alloc_fragment((N,), "float32")
            T.copy(A[bx * block_M, 0], tile)
            T.reduce_sum(tile, part, dim=0)
            T.atomic_add(Out, part)
    return main


flashattn = zoo.flashattn


def assert_positive(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), limit: T.float32):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(N):
                T.device_assert(A[i] < limit, "A must stay below the limit")
    return main


def all_kernels():
    """name -> prim_func of every kernel above, in sizes small enough for compile-only checks."""
    return {
        "gemm_f16_tn": matmul(256, 256, 128, trans_B=True),
        "gemm_f16_nn": matmul(256, 256, 128),
        "gemm_f16_tt": matmul(256, 256, 128, trans_A=True, trans_B=True),
        "gemm_bf16": matmul(256, 256, 128, dtype="bfloat16", out_dtype="float32"),
        "gemm_tf32": matmul(256, 256, 128, 64, 64, 32, dtype="float32"),
        "gemm_int8": matmul(256, 256, 128, 64, 64, 64, dtype="int8", accum_dtype="int32", out_dtype="int32"),
        "gemm_f16_acc16": matmul(256, 256, 128, accum_dtype="float16"),
        "gemm_f64_simt": matmul(64, 64, 64, 32, 32, 16, dtype="float64", accum_dtype="float64", num_stages=2),
        "gemm_swizzle": matmul(512, 512, 128, swizzle_panel=2),
        "gemm_dynamic_m": matmul_dynamic_m(256, 128),
        "softmax": softmax(64, 512),
        "rms_norm": rms_norm(64, 512),
        "layer_norm": layer_norm(64, 256),
        "elementwise_add": elementwise_add(100, 300),
        "elementwise_tiles": elementwise_tiles(128, 256),
        "column_sum_shared": column_sum_shared(32, 64),
        "atomic_row_sums": atomic_row_sums(64, 128),
        "flash_causal": flashattn(1, 2, 256, 64, True),
        "flash_full": flashattn(1, 2, 256, 64, False),
        "flash_d128": flashattn(1, 2, 256, 128, False, block_M=64, block_N=64),
        "assert_positive": assert_positive(64),
    }


def rms_norm_rows(M, N, blk_m=1, dtype="float16", eps=1e-6):
    """RMSNorm with rows held in registers (no shared staging): the memory-bound benchmark form."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            x = T.alloc_fragment((blk_m, N), "float32")
            sq = T.alloc_fragment((blk_m, N), "float32")
            ss = T.alloc_fragment((blk_m,), "float32")
            T.copy(A[bx * blk_m, 0], x)
            for i, j in T.Parallel(blk_m, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i in T.Parallel(blk_m):
                ss[i] = T.rsqrt(ss[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                x[i, j] = x[i, j] * ss[i] * W[j]
            T.copy(x, B[bx * blk_m, 0])
    return main


def vector_add(M, N, block_M=8, block_N=512, dtype="float16"):
    """C = A + B through fragments (16-byte loads and stores)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a = T.alloc_fragment((block_M, block_N), dtype)
            b = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], a)
            T.copy(B[by * block_M, bx * block_N], b)
            for i, j in T.Parallel(block_M, block_N):
                a[i, j] = a[i, j] + b[i, j]
            T.copy(a, C[by * block_M, bx * block_N])
    return main


def elementwise_unguarded(M, N, block_M=32, block_N=128, dtype="float32"):
    """TileLang's element-wise idiom without explicit guards: the tails are guarded by the compiler."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * 2 + \
                    B[by * block_M + i, bx * block_N + j]
    return main
