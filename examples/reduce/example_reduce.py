"""Sum and max along each dimension of a 2-D tile with T.reduce_sum / T.reduce_max.

Each block loads a block_M x N tile of A and produces
  * along dim 1 (across a row):     RowSum[i] = sum_j A[i, j],  RowMax[i] = max_j A[i, j]
  * along dim 0 (down the columns): ColSum[b, j], ColMax[b, j] over the rows of block b
    (per-block partial results; a second pass or an atomic would combine them).
When M is not a multiple of block_M, the last tile hangs past the tensor: T.copy fills those rows
with 0, which is harmless for sums but wrong for a max, so the max tile is loaded with an explicit
-inf for rows outside the tensor.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def reduce_2d(M, N, block_M=16, dtype="float32", threads=128):
    num_blocks = (M + block_M - 1) // block_M

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), RowSum: T.Tensor((M,), dtype), RowMax: T.Tensor((M,), dtype),
             ColSum: T.Tensor((num_blocks, N), dtype), ColMax: T.Tensor((num_blocks, N), dtype)):
        with T.Kernel(num_blocks, threads=threads) as bx:
            tile = T.alloc_fragment((block_M, N), dtype)
            tile_for_max = T.alloc_fragment((block_M, N), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            row_max = T.alloc_fragment((block_M,), dtype)
            col_sum = T.alloc_fragment((N,), dtype)
            col_max = T.alloc_fragment((N,), dtype)
            T.copy(A[bx * block_M, 0], tile)
            for i, j in T.Parallel(block_M, N):
                tile_for_max[i, j] = T.if_then_else(bx * block_M + i < M, tile[i, j], -T.infinity(dtype))
            T.reduce_sum(tile, row_sum, dim=1)
            T.reduce_max(tile_for_max, row_max, dim=1)
            T.reduce_sum(tile, col_sum, dim=0)
            T.reduce_max(tile_for_max, col_max, dim=0)
            T.copy(row_sum, RowSum[bx * block_M])
            T.copy(row_max, RowMax[bx * block_M])
            T.copy(col_sum, ColSum[bx, 0])
            T.copy(col_max, ColMax[bx, 0])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def reference(a, block_M):
    a = a.astype(np.float64)
    blocks = [a[r:r + block_M] for r in range(0, a.shape[0], block_M)]
    return (a.sum(axis=1), a.max(axis=1), np.stack([b.sum(axis=0) for b in blocks]),
            np.stack([b.max(axis=0) for b in blocks]))


def main(M=4096, N=1024, block_M=16, target="auto"):
    kernel = tilelang.jit(out_idx=[1, 2, 3, 4], target=target)(reduce_2d)(M, N, block_M)
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((M, N)) - 3.0).astype(np.float32)  # mostly negative: a 0 would win a max
    outs = kernel(a)
    ok = True
    for name, out, ref in zip(("RowSum", "RowMax", "ColSum", "ColMax"), outs, reference(a, block_M)):
        out = np.asarray(out).astype(np.float64)
        if not np.allclose(out, ref, rtol=1e-5, atol=1e-4):
            err = np.abs(out - ref)
            worst = np.unravel_index(int(np.argmax(err)), err.shape)
            print(f"{name}: Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
                  f"got {out[worst]!r}, expected {ref[worst]!r}")
            ok = False
    if not ok:
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.m, args.n, target=args.target)
