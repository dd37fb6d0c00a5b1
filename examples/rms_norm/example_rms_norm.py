"""RMSNorm: Y[i, :] = X[i, :] / sqrt(mean(X[i, :]^2) + eps) * weight.

Each block normalizes block_M whole rows: the squares are summed per row with T.reduce_sum into a
float32 fragment, T.rsqrt turns the mean into the scale, and one T.Parallel loop applies scale and
weight. Inputs and outputs are float16; the statistics are float32.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def rms_norm(M, N, block_M=4, eps=1e-6, dtype="float16", accum_dtype="float32", threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), weight: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            w_shared = T.alloc_shared((N,), dtype)  # read by every thread: shared, not a fragment
            x = T.alloc_fragment((block_M, N), accum_dtype)
            x_sq = T.alloc_fragment((block_M, N), accum_dtype)
            sum_sq = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(X[bx * block_M, 0], X_shared)
            T.copy(weight, w_shared)
            T.copy(X_shared, x)
            for i, j in T.Parallel(block_M, N):
                x_sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(x_sq, sum_sq, dim=1)
            for i in T.Parallel(block_M):
                sum_sq[i] = T.rsqrt(sum_sq[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * sum_sq[i] * w_shared[j]
            T.copy(x, Y[bx * block_M, 0])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def reference(x, weight, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * weight.astype(np.float64)


def main(M=4096, N=1024, block_M=4, eps=1e-6, target="auto"):
    kernel = tilelang.jit(out_idx=[-1], target=target)(rms_norm)(M, N, block_M, eps)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((M, N)) * rng.uniform(0.1, 10, (M, 1))).astype(np.float16)  # rows of varied scale
    weight = rng.uniform(0.5, 1.5, N).astype(np.float16)
    y = kernel(x, weight).astype(np.float64)
    ref = reference(x, weight, eps)
    if not np.allclose(y, ref, rtol=2e-3, atol=2e-3):  # float16 output: ~1 ulp
        err = np.abs(y - ref)
        worst = np.unravel_index(int(np.argmax(err)), err.shape)
        print(f"Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
              f"got {y[worst]!r}, expected {ref[worst]!r}")
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.m, args.n, target=args.target)
