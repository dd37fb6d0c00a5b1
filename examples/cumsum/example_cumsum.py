"""Inclusive prefix sums with T.cumsum, forward and reverse, along either dimension.

dim=1: each block scans block rows of A along the row (tile block x N);
dim=0: each block scans block columns of A down the column (tile M x block).
reverse=True sums from the end: B[i, j] = sum_{k >= j} A[i, k]. The tile is scanned in place in
shared memory (on a GPU the threads of a block cooperate on it); inputs and outputs are float32.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def cumsum(M, N, block=8, dim=1, reverse=False, dtype="float32", threads=128):
    tile = (block, N) if dim == 1 else (M, block)
    grid = T.ceildiv(M, block) if dim == 1 else T.ceildiv(N, block)

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(grid, threads=threads) as bx:
            A_shared = T.alloc_shared(tile, dtype)
            if dim == 1:
                T.copy(A[bx * block, 0], A_shared)
            else:
                T.copy(A[0, bx * block], A_shared)
            T.cumsum(A_shared, dim=dim, reverse=reverse)  # in place: dst defaults to src
            if dim == 1:
                T.copy(A_shared, B[bx * block, 0])
            else:
                T.copy(A_shared, B[0, bx * block])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def reference(a, dim, reverse):
    a = a.astype(np.float64)
    if reverse:
        return np.flip(np.cumsum(np.flip(a, axis=dim), axis=dim), axis=dim)
    return np.cumsum(a, axis=dim)


def main(M=1024, N=1024, block=8, target="auto"):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    ok = True
    for dim in (1, 0):
        for reverse in (False, True):
            kernel = tilelang.jit(out_idx=[-1], target=target)(cumsum)(M, N, block, dim, reverse)
            b = kernel(a).astype(np.float64)
            ref = reference(a, dim, reverse)
            if not np.allclose(b, ref, rtol=1e-5, atol=1e-4):
                err = np.abs(b - ref)
                worst = np.unravel_index(int(np.argmax(err)), err.shape)
                print(f"cumsum dim={dim} reverse={reverse}: Kernel Output Mismatch: max abs error {err.max():.3e} "
                      f"at {worst}: got {b[worst]!r}, expected {ref[worst]!r}")
                ok = False
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
