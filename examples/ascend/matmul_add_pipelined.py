"""matmul + add (tilelang-ascend examples/pipeline/matmul_add): the cube cores compute A @ B with a
T.Pipelined K loop (the L1 tiles get two versions, so the GM->L1 copy of the next K step overlaps
the cube work of the current one), write the fp32 tile to a GM workspace and raise a cross-core
flag; the vector cores wait for it, add D and write C. Intra-core flags come from the compiler
(T.Pipelined turns automatic sync on); the cube->vector hand-off is written by hand."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3], workspace_idx=[4])
def matmul_add(M, N, K, block_M=128, block_N=128, K_L1=64, dtype="float16", accum_dtype="float"):
    m_num, n_num = M // block_M, N // block_N
    half = block_M // 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), D: T.Tensor((M, N), accum_dtype),
             C: T.Tensor((M, N), accum_dtype), workspace: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(m_num * n_num, is_npu=True) as (cid, vid):
            bx = cid // n_num
            by = cid % n_num
            A_L1 = T.alloc_L1((block_M, K_L1), dtype)
            B_L1 = T.alloc_L1((K_L1, block_N), dtype)
            C_L0 = T.alloc_L0C((block_M, block_N), accum_dtype)
            c_ub = T.alloc_ub((half, block_N), accum_dtype)
            d_ub = T.alloc_ub((half, block_N), accum_dtype)
            with T.Scope("C"):
                for k in T.Pipelined(T.ceildiv(K, K_L1), num_stages=2):
                    T.copy(A[bx * block_M, k * K_L1], A_L1)
                    T.copy(B[k * K_L1, by * block_N], B_L1)
                    T.gemm_v0(A_L1, B_L1, C_L0, init=(k == 0))
                T.copy(C_L0, workspace[bx * block_M, by * block_N])
                T.set_cross_flag("fix", 0)
            with T.Scope("V"):
                T.wait_cross_flag(0)
                T.copy(workspace[bx * block_M + vid * half, by * block_N], c_ub)
                T.copy(D[bx * block_M + vid * half, by * block_N], d_ub)
                T.tile.add(c_ub, c_ub, d_ub)
                T.copy(c_ub, C[bx * block_M + vid * half, by * block_N])

    return main


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--k", type=int, default=512)
    args = ap.parse_args(argv)
    kernel = matmul_add(args.m, args.n, args.k)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((args.m, args.k)).astype(np.float16)
    b = rng.standard_normal((args.k, args.n)).astype(np.float16)
    d = rng.standard_normal((args.m, args.n)).astype(np.float32)
    c = kernel(a, b, d)
    ref = a.astype(np.float64) @ b.astype(np.float64) + d
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-2)
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
