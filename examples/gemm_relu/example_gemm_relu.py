"""GEMM with a fused epilogue: C = relu(A @ B + bias), float16 in, float32 accumulate, float16 out.

The epilogue runs on the accumulator fragment, in registers on a GPU, after the K loop and before
the single store: a T.Parallel loop over the tile adds the bias row and clamps at zero, so the
unactivated product never reaches global memory.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def matmul_relu(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16", accum_dtype="float32",
                num_stages=2, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), bias: T.Tensor((N,), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            bias_local = T.alloc_fragment((block_N,), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            # Epilogue on the fragment: bias + ReLU, then one store.
            T.copy(bias[bx * block_N], bias_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j] + bias_local[j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def main(M=1024, N=1024, K=1024, block_M=64, block_N=64, block_K=32, target="auto"):
    kernel = tilelang.jit(out_idx=[-1], target=target)(matmul_relu)(M, N, K, block_M, block_N, block_K)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    bias = rng.uniform(-1, 1, N).astype(np.float16)
    c = kernel(a, b, bias).astype(np.float64)

    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64), 0.0)
    if (ref == 0).mean() < 0.2:  # the check must exercise the clamp
        print("Kernel Output Mismatch: the inputs do not make ReLU clamp anything")
        sys.exit(1)
    if not np.allclose(c, ref, rtol=2e-3, atol=2e-3):
        err = np.abs(c - ref)
        worst = np.unravel_index(int(np.argmax(err)), err.shape)
        print(f"Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
              f"got {c[worst]!r}, expected {ref[worst]!r}")
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.m, args.n, args.k, target=args.target)
