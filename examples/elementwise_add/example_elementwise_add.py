"""Element-wise add C = A + B, tiled two ways: 1-D tiles of a vector and 2-D tiles of a matrix.

Each block copies its tile of A and B from global memory into fragments, adds them in a T.Parallel
loop and copies the sum back. Tiles at the end of a dimension that does not divide by the block are
handled by T.copy (reads outside the tensor give 0, writes outside are dropped).
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def elementwise_add_1d(N, block_N=1024, dtype="float32", threads=128):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
            A_local = T.alloc_fragment((block_N,), dtype)
            B_local = T.alloc_fragment((block_N,), dtype)
            C_local = T.alloc_fragment((block_N,), dtype)
            T.copy(A[bx * block_N], A_local)
            T.copy(B[bx * block_N], B_local)
            for i in T.Parallel(block_N):
                C_local[i] = A_local[i] + B_local[i]
            T.copy(C_local, C[bx * block_N])

    return main


def elementwise_add_2d(M, N, block_M=32, block_N=128, dtype="float32", threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            B_shared = T.alloc_shared((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(B[by * block_M, bx * block_N], B_shared)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = A_shared[i, j] + B_shared[i, j]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def check(name, out, ref, rtol, atol):
    out = np.asarray(out).astype(np.float64)
    if np.allclose(out, ref, rtol=rtol, atol=atol):
        return True
    err = np.abs(out - ref)
    worst = np.unravel_index(int(np.argmax(err)), err.shape)
    print(f"{name}: Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
          f"got {out[worst]!r}, expected {ref[worst]!r}")
    return False


def main(M=1024, N=1024, block_N_1d=1024, block_M=32, block_N=128, dtype="float32", target="auto"):
    rng = np.random.default_rng(0)
    ok = True

    kernel_1d = tilelang.jit(out_idx=[-1], target=target)(elementwise_add_1d)(M * N, block_N_1d, dtype)
    a = rng.standard_normal(M * N).astype(dtype)
    b = rng.standard_normal(M * N).astype(dtype)
    c = kernel_1d(a, b)
    ok &= check("1-D tiles", c, a.astype(np.float64) + b.astype(np.float64), 1e-6, 1e-6)

    kernel_2d = tilelang.jit(out_idx=[-1], target=target)(elementwise_add_2d)(M, N, block_M, block_N, dtype)
    a = rng.standard_normal((M, N)).astype(dtype)
    b = rng.standard_normal((M, N)).astype(dtype)
    c = kernel_2d(a, b)
    ok &= check("2-D tiles", c, a.astype(np.float64) + b.astype(np.float64), 1e-6, 1e-6)

    if not ok:
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.m, args.n, target=args.target)
