"""Tuned Expert GEMM with T.mma: tiles of 128x256 (the largest fp32 accumulator L0C holds), A and B
double-buffered through L1 in K chunks of 256 and through L0A/L0B in chunks of 64, with hand-written
ping-pong flags. The reverse flags are pre-armed before the tile loop and drained after it, the
pattern of the tilelang-ascend intrinsic GEMM:

    MTE1 -> MTE2  L1 slot free        M -> MTE1   L0 slot free        FIX -> M  L0C free
    MTE2 -> MTE1  L1 slot loaded      MTE1 -> M   L0 slot loaded      M -> FIX  C ready

This is the kernel bench/ascend_gemm.py times against the published A2 numbers."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=256, K_L1=256, K_L0=64, core_num=24, dtype="float16",
           accum_dtype="float"):
    m_num, n_num = M // block_M, N // block_N
    n_k1, n_k0 = K // K_L1, K_L1 // K_L0

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(core_num, is_npu=True) as (cid, _):
            A_L1 = T.alloc_L1((2, block_M, K_L1), dtype)
            B_L1 = T.alloc_L1((2, K_L1, block_N), dtype)
            A_L0 = T.alloc_L0A((2, block_M, K_L0), dtype)
            B_L0 = T.alloc_L0B((2, K_L0, block_N), dtype)
            C_L0 = T.alloc_L0C((block_M, block_N), accum_dtype)
            with T.Scope("C"):
                T.set_flag("mte1", "mte2", 0)
                T.set_flag("mte1", "mte2", 1)
                T.set_flag("m", "mte1", 0)
                T.set_flag("m", "mte1", 1)
                T.set_flag("fix", "m", 0)
                for bx, by in T.Persistent([m_num, n_num], core_num, cid):
                    T.wait_flag("fix", "m", 0)
                    for ko in T.serial(n_k1):
                        s1 = ko % 2
                        T.wait_flag("mte1", "mte2", s1)
                        T.copy(A[bx * block_M, ko * K_L1], A_L1[s1, :, :])
                        T.copy(B[ko * K_L1, by * block_N], B_L1[s1, :, :])
                        T.set_flag("mte2", "mte1", s1)
                        T.wait_flag("mte2", "mte1", s1)
                        for ki in T.serial(n_k0):
                            s0 = ki % 2
                            T.wait_flag("m", "mte1", s0)
                            T.copy(A_L1[s1, :, ki * K_L0:(ki + 1) * K_L0], A_L0[s0, :, :])
                            T.copy(B_L1[s1, ki * K_L0:(ki + 1) * K_L0, :], B_L0[s0, :, :])
                            T.set_flag("mte1", "m", s0)
                            T.wait_flag("mte1", "m", s0)
                            T.mma(A_L0[s0, :, :], B_L0[s0, :, :], C_L0, init=(ko == 0 and ki == 0))
                            T.set_flag("m", "mte1", s0)
                        T.set_flag("mte1", "mte2", s1)
                    T.set_flag("m", "fix", 0)
                    T.wait_flag("m", "fix", 0)
                    T.copy(C_L0, C[bx * block_M, by * block_N])
                    T.set_flag("fix", "m", 0)
                T.wait_flag("mte1", "mte2", 0)
                T.wait_flag("mte1", "mte2", 1)
                T.wait_flag("m", "mte1", 0)
                T.wait_flag("m", "mte1", 1)
                T.wait_flag("fix", "m", 0)

    return main


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=1024)
    args = ap.parse_args(argv)
    kernel = matmul(args.m, args.n, args.k)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((args.m, args.k)).astype(np.float16)
    b = rng.standard_normal((args.k, args.n)).astype(np.float16)
    c = kernel(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-2, atol=2e-1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
