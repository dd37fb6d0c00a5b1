"""Parsing speed: a warm-cache kernel launch re-parses the kernel, so a 30-line kernel should take ~1 ms."""
import time

import tilelang.language as T


def gemm_builder(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), dtype),
             bias: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_out = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(10)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                row = by * block_M + i
                col = bx * block_N + j
                if row < M and col < N:
                    v = C_local[i, j] + bias[col]
                    C_local[i, j] = T.max(v, 0.0)
                else:
                    C_local[i, j] = 0.0
            T.copy(C_local, C_out)
            T.copy(C_out, C[by * block_M, bx * block_N])
    return gemm


def test_warm_parse_of_a_30_line_kernel_is_about_a_millisecond():
    gemm_builder(1024, 1024, 1024, 128, 128, 32)   # cold: reads and rewrites the source once
    times = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(20):
            f = gemm_builder(1024, 1024, 1024, 128, 128, 32)
        times.append((time.perf_counter() - t) / 20)
    best = min(times)
    assert "C_local[i, j] = max(v, 0.0f32)" in f.script()
    # Measured ~0.3 ms on a shared 2-core machine; the bound leaves room for a loaded machine.
    assert best < 2e-3, f"warm parse took {best * 1e3:.2f} ms"
