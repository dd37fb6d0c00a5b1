"""Expert GEMM with T.gemm_v0, as in the tilelang-ascend README: a fixed number of cube cores walk
the output tiles; per tile the K loop stages A and B through L1 and accumulates into L0C with the
self-synchronising gemm_v0 macro; the result leaves through the FIX pipe. The barrier_all calls are
the ones README users write; gemm_v0's own flags already order everything (they cost little)."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M, block_N, K_L1, core_num=24, dtype="float16", accum_dtype="float"):
    m_num = M // block_M
    n_num = N // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(core_num, is_npu=True) as (cid, _):
            A_L1 = T.alloc_L1((block_M, K_L1), dtype)
            B_L1 = T.alloc_L1((K_L1, block_N), dtype)
            C_L0 = T.alloc_L0C((block_M, block_N), accum_dtype)
            with T.Scope("C"):
                loop_num = T.ceildiv(m_num * n_num, core_num)
                for i in T.serial(loop_num):
                    tile = i * core_num + cid
                    if tile < m_num * n_num:
                        bx = tile // n_num
                        by = tile % n_num
                        for k in T.serial(T.ceildiv(K, K_L1)):
                            T.copy(A[bx * block_M, k * K_L1], A_L1)
                            T.copy(B[k * K_L1, by * block_N], B_L1)
                            T.barrier_all()
                            T.gemm_v0(A_L1, B_L1, C_L0, init=(k == 0))
                            T.barrier_all()
                        T.copy(C_L0, C[bx * block_M, by * block_N])
                        T.barrier_all()

    return main


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=512)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--k", type=int, default=512)
    args = ap.parse_args(argv)
    kernel = matmul(args.m, args.n, args.k, 128, 128, 128)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((args.m, args.k)).astype(np.float16)
    b = rng.standard_normal((args.k, args.n)).astype(np.float16)
    c = kernel(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-2, atol=1e-1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
