"""Quickstart: a tiled GEMM in TileLang, compiled for the default target and checked against numpy."""
import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])  # C is allocated by the runtime and returned
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float32", accum_dtype="float32"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm


def main():
    M = N = K = 1024
    kernel = matmul(M, N, K)  # compiled once, then cached on disk
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = kernel(a, b)

    ref = a.astype(np.float64) @ b.astype(np.float64)
    if np.allclose(c, ref, rtol=1e-3, atol=1e-3):
        print("Kernel Output Match!")
    else:
        print(f"Kernel Output Mismatch: max abs error {np.abs(c - ref).max():.3e}")
        raise SystemExit(1)

    ms = kernel.get_profiler().do_bench(warmup=25, rep=100)
    print(f"target: {kernel.target}   {M}x{N}x{K} float32 GEMM: {ms:.3f} ms, "
          f"{2 * M * N * K / ms / 1e6:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
