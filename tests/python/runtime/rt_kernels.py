"""Small kernels, written as TileLang users write them, used by the runtime tests."""
import os
import sys

import numpy as np

import tilelang.language as T

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


add_1d = zoo.add_1d


def gemm(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16", accum_dtype="float32"):
    return zoo.gemm(M, N, K, block_M, block_N, block_K, dtype, accum_dtype)


def gemm_ref(A, B):
    """A @ B in float32, in A's dtype; numpy arrays or torch tensors (the profiler generates torch
    tensors when torch is installed)."""
    if isinstance(A, np.ndarray):
        return (A.astype(np.float32) @ B.astype(np.float32)).astype(A.dtype)
    return (A.float() @ B.float()).to(A.dtype)


def scale_prefix(N):
    """B[i] = A[i] * alpha for i < n_valid, else 0; scalars of three types."""
    @T.prim_func
    def scale(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), alpha: T.float32, n_valid: T.int32,
              negate: T.bool):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                idx = bx * 64 + i
                if idx < n_valid:
                    if negate:
                        B[idx] = -A[idx] * alpha
                    else:
                        B[idx] = A[idx] * alpha
                else:
                    B[idx] = 0.0
    return scale


def rows_dynamic(cols=64, block=16, dtype="float32"):
    """B[r, c] = 2 * A[r, c] over a dynamic number of rows m."""
    m = T.dynamic("m")

    @T.prim_func
    def rows(A: T.Tensor((m, cols), dtype), B: T.Tensor((m, cols), dtype)):
        with T.Kernel(T.ceildiv(m, block), threads=128) as bx:
            for i, j in T.Parallel(block, cols):
                if bx * block + i < m:
                    B[bx * block + i, j] = A[bx * block + i, j] * 2.0
    return rows


def sum_and_diff(N):
    @T.prim_func
    def sd(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), S: T.Tensor((N,), "float32"),
           D: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                S[bx * 128 + i] = A[bx * 128 + i] + B[bx * 128 + i]
                D[bx * 128 + i] = A[bx * 128 + i] - B[bx * 128 + i]
    return sd


def with_workspace(N):
    """B = A + W where W is a workspace (zero-filled by the runtime), then W = 7."""
    @T.prim_func
    def ws(A: T.Tensor((N,), "float32"), W: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i] + W[bx * 128 + i]
                W[bx * 128 + i] = 7.0
    return ws


def checked(N):
    @T.prim_func
    def chk(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.serial(64):
                T.device_assert(A[bx * 64 + i] >= 0.0, "A must be non-negative")
                B[bx * 64 + i] = A[bx * 64 + i] * 3.0
    return chk


def strided_rows():
    """Y[r, c] = X[r, c] + 1 for X with a leading stride s0 (a row slice of a wider array)."""
    m = T.dynamic("m")
    s0 = T.dynamic("s0", "int64")

    @T.prim_func
    def strided(X: T.StridedTensor((m, 8), (s0, 1), "float32"), Y: T.Tensor((m, 8), "float32")):
        with T.Kernel(m, threads=8) as bx:
            for j in T.Parallel(8):
                Y[bx, j] = X[bx, j] + 1.0
    return strided


def printing():
    @T.prim_func
    def say(A: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            T.printf("value %d\n", A[2])
    return say
