"""Kernel builders shared by the end-to-end tests (TileLang GPU style, compiled here for cpu)."""
import os
import sys

import ml_dtypes
import numpy as np

import tilelang.language as T

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def add_1d(N, block, dtype="float32"):
    """C = A + B through fragments (T.copy handles the tail)."""
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            a = T.alloc_fragment((block,), dtype)
            b = T.alloc_fragment((block,), dtype)
            T.copy(A[bx * block], a)
            T.copy(B[bx * block], b)
            for i in T.Parallel(block):
                a[i] = a[i] + b[i]
            T.copy(a, C[bx * block])
    return main


def add_2d_direct(M, N, block_M, block_N, dtype="float32"):
    """C = A + B indexing the global tensors inside T.Parallel (the compiler guards the tail)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \
                    B[by * block_M + i, bx * block_N + j]
    return main


def scale_add_2d(M, N, block_M, block_N, dtype="float32"):
    """C = A * B + 1 through shared tiles; M may be a T.dynamic dimension."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a = T.alloc_shared((block_M, block_N), dtype)
            b = T.alloc_shared((block_M, block_N), dtype)
            c = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], a)
            T.copy(B[by * block_M, bx * block_N], b)
            for i, j in T.Parallel(block_M, block_N):
                c[i, j] = a[i, j] * b[i, j] + 1
            T.copy(c, C[by * block_M, bx * block_N])
    return main


def gemm(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float32", out_dtype=None,
         transpose_A=False, transpose_B=False, num_stages=2):
    """C = op(A) @ op(B), pipelined over K; M may be a T.dynamic dimension."""
    return zoo.gemm(M, N, K, block_M, block_N, block_K, dtype, accum_dtype, out_dtype, trans_A=transpose_A,
                    trans_B=transpose_B, num_stages=num_stages)


softmax_rows = zoo.softmax  # whole rows in one tile


def softmax_streamed(M, N, block_M, block_N, dtype="float32"):
    """Rows streamed in column blocks (online max/sum), the last block partial: columns past N are
    masked to -inf, since T.copy fills them with 0."""
    n_blocks = (N + block_N - 1) // block_N

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, block_N), "float32")
            mx = T.alloc_fragment((block_M,), "float32")
            mx_prev = T.alloc_fragment((block_M,), "float32")
            s = T.alloc_fragment((block_M,), "float32")
            bs = T.alloc_fragment((block_M,), "float32")
            T.fill(mx, -T.infinity("float32"))
            T.fill(s, 0)
            for k in T.serial(n_blocks):
                T.copy(A[bx * block_M, k * block_N], x)
                for i, j in T.Parallel(block_M, block_N):
                    x[i, j] = T.if_then_else(k * block_N + j < N, x[i, j], -T.infinity("float32"))
                T.copy(mx, mx_prev)
                T.reduce_max(x, mx, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    x[i, j] = T.exp(x[i, j] - mx[i])
                T.reduce_sum(x, bs, dim=1)
                for i in T.Parallel(block_M):
                    s[i] = s[i] * T.exp(mx_prev[i] - mx[i]) + bs[i]
            for k in T.serial(n_blocks):
                T.copy(A[bx * block_M, k * block_N], x)
                for i, j in T.Parallel(block_M, block_N):
                    x[i, j] = T.exp(x[i, j] - mx[i]) / s[i]
                T.copy(x, B[bx * block_M, k * block_N])
    return main


def reduce_tiles(M, N, block_M, block_N, op, dim, dtype="float32", out_dtype=None):
    """Per-tile reduction of a 2-D grid of tiles: R[tile row, column] (dim 0) or R[row, tile column]
    (dim 1). Tail elements read as 0 are replaced by op's identity, so max/min are right too."""
    out_dtype = out_dtype or dtype
    tiles_m = (M + block_M - 1) // block_M
    tiles_n = (N + block_N - 1) // block_N
    out_shape = (tiles_m, N) if dim == 0 else (M, tiles_n)

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), R: T.Tensor(out_shape, out_dtype)):
        with T.Kernel(tiles_n, tiles_m, threads=128) as (bx, by):
            raw = T.alloc_fragment((block_M, block_N), dtype)
            x = T.alloc_fragment((block_M, block_N), dtype)
            r = T.alloc_fragment((block_N,) if dim == 0 else (block_M,), out_dtype)
            T.copy(A[by * block_M, bx * block_N], raw)
            identity = -T.infinity(dtype) if op == "max" else T.infinity(dtype) if op == "min" else 0
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.if_then_else((by * block_M + i < M) and (bx * block_N + j < N), raw[i, j], identity)
            getattr(T, "reduce_" + op)(x, r, dim=dim)
            if dim == 0:
                T.copy(r, R[by, bx * block_N])
            else:
                T.copy(r, R[by * block_M:(by + 1) * block_M, bx])
    return main


def cumsum_rows(M, N, block_M, reverse, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), dtype)
            y = T.alloc_fragment((block_M, N), dtype)
            T.copy(A[bx * block_M, 0], x)
            T.cumsum(x, y, dim=1, reverse=reverse)
            T.copy(y, B[bx * block_M, 0])
    return main


def reduce_columns_of_width(M, W, block_M, op, clear, dtype="float32"):
    """R[i] (=|op|=) over the W columns of row i; W may be 1, where the reduction is element-wise.
    With clear=False the rows' results are combined with R's incoming values."""
    @T.prim_func
    def main(A: T.Tensor((M, W), dtype), R: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, W), dtype)
            r = T.alloc_fragment((block_M,), dtype)
            T.copy(A[bx * block_M, 0], x)
            T.copy(R[bx * block_M], r)
            getattr(T, "reduce_" + op)(x, r, dim=1, clear=clear)
            T.copy(r, R[bx * block_M])
    return main
