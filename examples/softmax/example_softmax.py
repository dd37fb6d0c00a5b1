"""Row softmax: B[i, :] = exp(A[i, :] - max(A[i, :])) / sum(exp(A[i, :] - max(A[i, :]))).

Each block loads block_M whole rows into a fragment, takes the row maxima with T.reduce_max,
exponentiates the shifted values in a T.Parallel loop, takes the row sums with T.reduce_sum and
scales. The max shift keeps exp from overflowing for large inputs. Rows past M in the last block
read as 0 and are never stored.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def softmax(M, N, block_M=8, dtype="float32", accum_dtype="float32", threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            A_shared = T.alloc_shared((block_M, N), dtype)
            x = T.alloc_fragment((block_M, N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(A[bx * block_M, 0], A_shared)
            T.copy(A_shared, x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp(x[i, j] - row_max[i])
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, B[bx * block_M, 0])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def reference(a):
    a = a.astype(np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(M=4096, N=1024, block_M=8, target="auto"):
    kernel = tilelang.jit(out_idx=[-1], target=target)(softmax)(M, N, block_M)
    rng = np.random.default_rng(0)
    # Large logits: without the max shift exp would overflow float32.
    a = (rng.standard_normal((M, N)) * 20 + 60).astype(np.float32)
    b = kernel(a).astype(np.float64)
    ref = reference(a)
    if not np.allclose(b, ref, rtol=1e-5, atol=1e-7):
        err = np.abs(b - ref)
        worst = np.unravel_index(int(np.argmax(err)), err.shape)
        print(f"Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
              f"got {b[worst]!r}, expected {ref[worst]!r}")
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.m, args.n, target=args.target)
