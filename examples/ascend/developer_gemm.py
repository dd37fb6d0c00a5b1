"""GEMM in Developer mode: T.alloc_shared / T.alloc_fragment, T.Pipelined over K, T.gemm — the GPU
spelling. Scope inference puts A_s/B_s in L1 and C_f in L0C; T.Pipelined double-buffers the L1
tiles; T.gemm expands into gemm_v0's L0A/L0B ping-pong; the intra-core flags are inserted. The
example prints the simulated time next to the tuned Expert GEMM (gemm_double_buffer.py) on the
same problem."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T

import gemm_double_buffer


@tilelang.jit(out_idx=[-1], target="npuir")
def matmul(M, N, K, block_M=128, block_N=256, block_K=256, dtype="float16", accum_dtype="float32"):
    m_num, n_num = M // block_M, N // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(m_num * n_num, is_npu=True) as cid:
            bx = cid // n_num
            by = cid % n_num
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            for k in T.Pipelined(K // block_K, num_stages=2):
                T.copy(A[bx * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, by * block_N], B_s)
                T.gemm(A_s, B_s, C_f, initC=(k == 0))
            T.copy(C_f, C[bx * block_M, by * block_N])

    return main


def run(M, N, K, seed=4):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    cycles = {}
    for name, k in (("developer", matmul(M, N, K)), ("expert", gemm_double_buffer.matmul(M, N, K))):
        c = k(a, b)
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-2, atol=2e-1)
        cycles[name] = k.info()["cycles"]
    return cycles


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=1024)
    args = ap.parse_args(argv)
    cycles = run(args.m, args.n, args.k)
    print(f"simulated cycles (A2): developer {cycles['developer']:.0f}, expert {cycles['expert']:.0f} "
          f"({cycles['developer'] / cycles['expert']:.3f}x)")
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
