"""Persistent Expert GEMM: `core_num` cube cores walk more output tiles than there are cores with
T.Persistent (grouped tile order for L2 reuse), the tilelang-ascend "fixed core" pattern. L1 buffers
are pinned with T.annotate_address and declared in the zN fractal layout with T.annotate_layout."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T
from tilelang.intrinsics import make_zn_layout


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, K_L1=128, core_num=20, dtype="float16", accum_dtype="float"):
    m_num, n_num = T.ceildiv(M, block_M), T.ceildiv(N, block_N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(core_num, is_npu=True) as (cid, _):
            A_L1 = T.alloc_L1((block_M, K_L1), dtype)
            B_L1 = T.alloc_L1((K_L1, block_N), dtype)
            C_L0 = T.alloc_L0C((block_M, block_N), accum_dtype)
            T.annotate_address({A_L1: 0, B_L1: block_M * K_L1 * 2})
            T.annotate_layout({A_L1: make_zn_layout(A_L1), B_L1: make_zn_layout(B_L1)})
            with T.Scope("C"):
                for bx, by in T.Persistent([m_num, n_num], core_num, cid, group_size=4):
                    for k in T.serial(T.ceildiv(K, K_L1)):
                        T.copy(A[bx * block_M, k * K_L1], A_L1)
                        T.copy(B[k * K_L1, by * block_N], B_L1)
                        T.gemm_v0(A_L1, B_L1, C_L0, init=(k == 0))
                    T.copy(C_L0, C[bx * block_M, by * block_N])

    return main


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=768)
    ap.add_argument("--n", type=int, default=640)
    ap.add_argument("--k", type=int, default=256)
    args = ap.parse_args(argv)
    kernel = matmul(args.m, args.n, args.k)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((args.m, args.k)).astype(np.float16)
    b = rng.standard_normal((args.k, args.n)).astype(np.float16)
    c = kernel(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-2, atol=1e-1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
