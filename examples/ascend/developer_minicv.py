"""TileLang-Ascend's "minicv" in Developer mode: a T.gemm into a fragment, T.exp of the result, both
copied out — no scopes, no flags, no workspace, no vid. Compiled for target "npuir", the compiler
puts C_BUF in L0C (gemm C) and D_BUF in UB (vector only), gives the vector cores a UB copy of C_BUF
through a GM workspace (L0C -> GM -> UB), splits the vector work between the two vector cores by
rows and inserts the cross-core and intra-core flags. kernel.get_kernel_source() shows the result.

The Expert version below is the same kernel written by hand (T.Scope, a GM workspace parameter,
T.set_cross_flag / T.wait_cross_flag, vid offsets; intra-core flags by TL_ASCEND_AUTO_SYNC). The
example prints both simulated times."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2, 3], target="npuir")
def minicv(M, N, K, block_M, block_N, dtype="float16", accum_dtype="float32"):
    m_num, n_num = M // block_M, N // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype),
             D: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(m_num * n_num, is_npu=True) as (cid, subid):
            bx = cid // n_num
            by = cid % n_num
            A_BUF = T.alloc_shared((block_M, K), dtype)
            B_BUF = T.alloc_shared((K, block_N), dtype)
            C_BUF = T.alloc_fragment((block_M, block_N), accum_dtype)
            D_BUF = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.copy(A[bx * block_M, 0], A_BUF)
            T.copy(B[0, by * block_N], B_BUF)
            T.gemm(A_BUF, B_BUF, C_BUF, initC=True)
            T.exp(C_BUF, D_BUF)
            T.copy(C_BUF, C[bx * block_M, by * block_N])
            T.copy(D_BUF, D[bx * block_M, by * block_N])

    return main


@tilelang.jit(out_idx=[2, 3, 4], target="ascend", pass_configs={tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC: True})
def minicv_expert(M, N, K, block_M, block_N, dtype="float16", accum_dtype="float32"):
    m_num, n_num = M // block_M, N // block_N
    half = block_M // 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype),
             D: T.Tensor((M, N), accum_dtype), W: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(m_num * n_num, is_npu=True) as (cid, vid):
            bx = cid // n_num
            by = cid % n_num
            a_l1 = T.alloc_L1((block_M, K), dtype)
            b_l1 = T.alloc_L1((K, block_N), dtype)
            c_l0 = T.alloc_L0C((block_M, block_N), accum_dtype)
            c_ub = T.alloc_ub((half, block_N), accum_dtype)
            d_ub = T.alloc_ub((half, block_N), accum_dtype)
            with T.Scope("C"):
                T.copy(A[bx * block_M, 0], a_l1)
                T.copy(B[0, by * block_N], b_l1)
                T.gemm_v0(a_l1, b_l1, c_l0, init=True)
                T.copy(c_l0, C[bx * block_M, by * block_N])
                T.copy(c_l0, W[bx * block_M, by * block_N])
                T.set_cross_flag("fix", 0)
            with T.Scope("V"):
                T.wait_cross_flag(0)
                T.copy(W[bx * block_M + vid * half, by * block_N], c_ub)
                T.tile.exp(d_ub, c_ub)
                T.copy(d_ub, D[bx * block_M + vid * half, by * block_N])

    return main


def run(M, N, K, block_M=128, block_N=256, seed=2):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((M, K)) * 0.25).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.25).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    dev = minicv(M, N, K, block_M, block_N)
    exp = minicv_expert(M, N, K, block_M, block_N)
    cycles = {}
    for name, k in (("developer", dev), ("expert", exp)):
        out = k(a, b)
        c, d = out[0], out[1]
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(d.astype(np.float64), np.exp(ref), rtol=1e-4, atol=1e-5)
        cycles[name] = k.info()["cycles"]
    return cycles


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=256)
    args = ap.parse_args(argv)
    cycles = run(args.m, args.n, args.k)
    print(f"simulated cycles (A2): developer {cycles['developer']:.0f}, expert {cycles['expert']:.0f} "
          f"({cycles['developer'] / cycles['expert']:.3f}x)")
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
