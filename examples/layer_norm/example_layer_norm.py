"""LayerNorm: Y[i, :] = (X[i, :] - mean) / sqrt(var + eps) * gamma + beta, per row.

Each block normalizes block_M whole rows in two reductions over a float32 fragment: T.reduce_sum
of the row gives the mean, T.reduce_sum of the centered squares gives the (biased) variance.
Centering before squaring keeps the variance accurate for rows with a large mean. Inputs, gamma,
beta and the output are float16.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def layer_norm(M, N, block_M=4, eps=1e-5, dtype="float16", accum_dtype="float32", threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), gamma: T.Tensor((N,), dtype), beta: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            # gamma and beta are read by every thread of a row: shared memory, not fragments.
            gamma_shared = T.alloc_shared((N,), dtype)
            beta_shared = T.alloc_shared((N,), dtype)
            x = T.alloc_fragment((block_M, N), accum_dtype)
            x_sq = T.alloc_fragment((block_M, N), accum_dtype)
            mean = T.alloc_fragment((block_M,), accum_dtype)
            rstd = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(X[bx * block_M, 0], X_shared)
            T.copy(gamma, gamma_shared)
            T.copy(beta, beta_shared)
            T.copy(X_shared, x)
            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(block_M):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] - mean[i]
                x_sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(x_sq, rstd, dim=1)
            for i in T.Parallel(block_M):
                rstd[i] = T.rsqrt(rstd[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * rstd[i] * gamma_shared[j] + beta_shared[j]
            T.copy(x, Y[bx * block_M, 0])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def reference(x, gamma, beta, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma.astype(np.float64) + beta.astype(np.float64)


def main(M=4096, N=1024, block_M=4, eps=1e-5, target="auto"):
    kernel = tilelang.jit(out_idx=[-1], target=target)(layer_norm)(M, N, block_M, eps)
    rng = np.random.default_rng(0)
    # Rows with a large mean relative to their spread: a one-pass E[x^2] - E[x]^2 would lose digits.
    x = (rng.standard_normal((M, N)) + rng.uniform(-50, 50, (M, 1))).astype(np.float16)
    gamma = rng.uniform(0.5, 1.5, N).astype(np.float16)
    beta = rng.uniform(-1, 1, N).astype(np.float16)
    y = kernel(x, gamma, beta).astype(np.float64)
    ref = reference(x, gamma, beta, eps)
    if not np.allclose(y, ref, rtol=2e-3, atol=4e-3):  # float16 output: ~1 ulp
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
