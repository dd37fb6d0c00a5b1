"""Persistent GEMM: a fixed number of workers (blocks) walk all output tiles with T.Persistent.

Instead of one block per C tile, the grid has `num_workers` blocks (on a GPU: about one per SM) and
each worker loops over tiles worker_id, worker_id + num_workers, ... until the tiles run out; any tile
count works with any worker count. Tile ids are decoded in groups of `group_size` tile-rows, so
workers running at the same time touch nearby rows of A and columns of B (better L2 reuse on GPUs).
Besides C the kernel counts, with T.atomic_add, how often each tile was computed, so the example
checks that the schedule covers every tile exactly once.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def persistent_matmul(M, N, K, block_M=64, block_N=64, block_K=32, num_workers=8, group_size=8, dtype="float16",
                      accum_dtype="float32", num_stages=2, threads=128):
    tiles_m = (M + block_M - 1) // block_M
    tiles_n = (N + block_N - 1) // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype),
             Visits: T.Tensor((tiles_m, tiles_n), "int32")):
        with T.Kernel(num_workers, threads=threads) as worker_id:
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            for bm, bn in T.Persistent([tiles_m, tiles_n], num_workers, worker_id, group_size):
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[bm * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bn * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[bm * block_M, bn * block_N])
                # Scalar code in a kernel runs on every thread of a GPU block: one thread counts.
                if T.get_thread_binding() == 0:
                    T.atomic_add(Visits[bm, bn], 1)

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def main(M=1024, N=1024, K=1024, block_M=64, block_N=64, block_K=32, num_workers=8, group_size=8, target="auto"):
    # C is allocated by the runtime; Visits is passed in zero-filled (runtime outputs are not initialized).
    kernel = tilelang.jit(out_idx=[2], target=target)(persistent_matmul)(
        M, N, K, block_M, block_N, block_K, num_workers, group_size)
    tiles = (-(-M // block_M), -(-N // block_N))
    if tiles[0] * tiles[1] <= num_workers:
        print(f"Kernel Output Mismatch: {tiles[0] * tiles[1]} tiles for {num_workers} workers; "
              "a persistent schedule needs more tiles than workers")
        sys.exit(1)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    visits = np.zeros(tiles, dtype=np.int32)
    c = kernel(a, b, visits).astype(np.float64)  # the kernel counts into visits

    ok = True
    if not (visits == 1).all():
        print(f"Kernel Output Mismatch: tiles computed {visits.min()}..{visits.max()} times, expected exactly once")
        ok = False
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if not np.allclose(c, ref, rtol=2e-3, atol=2e-3):
        err = np.abs(c - ref)
        worst = np.unravel_index(int(np.argmax(err)), err.shape)
        print(f"Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
              f"got {c[worst]!r}, expected {ref[worst]!r}")
        ok = False
    if not ok:
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--workers", type=int, default=8, help="persistent blocks (on a GPU: the SM count)")
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.m, args.n, args.k, num_workers=args.workers, target=args.target)
