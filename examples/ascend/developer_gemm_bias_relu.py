"""GEMM + bias + ReLU fused, in Developer mode: the epilogue is a T.Parallel over the gemm's
fragment. The compiler keeps the accumulator in L0C, copies it to the vector cores through a GM
workspace, splits the epilogue between the two vector cores by rows (the bias, indexed by column,
stays whole on both) and writes the result from UB. The Expert version is the same kernel by hand;
the example prints both simulated times."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1], target="npuir")
def gemm_bias_relu(M, N, K, block_M=128, block_N=128, block_K=128, dtype="float16", accum_dtype="float32"):
    m_num, n_num = M // block_M, N // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), Bias: T.Tensor((N,), accum_dtype),
             C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(m_num * n_num, is_npu=True) as cid:
            bx = cid // n_num
            by = cid % n_num
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            bias_s = T.alloc_shared((block_N,), accum_dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            for k in T.Pipelined(K // block_K, num_stages=2):
                T.copy(A[bx * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, by * block_N], B_s)
                T.gemm(A_s, B_s, C_f, initC=(k == 0))
            T.copy(Bias[by * block_N], bias_s)
            for i, j in T.Parallel(block_M, block_N):
                C_f[i, j] = T.max(C_f[i, j] + bias_s[j], 0.0)
            T.copy(C_f, C[bx * block_M, by * block_N])

    return main


@tilelang.jit(out_idx=[-2], target="ascend", pass_configs={tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC: True})
def gemm_bias_relu_expert(M, N, K, block_M=128, block_N=128, block_K=128, dtype="float16", accum_dtype="float32"):
    m_num, n_num = M // block_M, N // block_N
    half = block_M // 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), Bias: T.Tensor((N,), accum_dtype),
             C: T.Tensor((M, N), accum_dtype), W: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(m_num * n_num, is_npu=True) as (cid, vid):
            bx = cid // n_num
            by = cid % n_num
            a_l1 = T.alloc_L1((2, block_M, block_K), dtype)
            b_l1 = T.alloc_L1((2, block_K, block_N), dtype)
            c_l0 = T.alloc_L0C((block_M, block_N), accum_dtype)
            c_ub = T.alloc_ub((half, block_N), accum_dtype)
            bias_ub = T.alloc_ub((block_N,), accum_dtype)
            with T.Scope("C"):
                for k in T.serial(K // block_K):
                    T.copy(A[bx * block_M, k * block_K], a_l1[k % 2, :, :])
                    T.copy(B[k * block_K, by * block_N], b_l1[k % 2, :, :])
                    T.gemm_v0(a_l1[k % 2, :, :], b_l1[k % 2, :, :], c_l0, init=(k == 0))
                T.copy(c_l0, W[bx * block_M, by * block_N])
                T.set_cross_flag("fix", 0)
            with T.Scope("V"):
                T.copy(Bias[by * block_N], bias_ub)
                T.wait_cross_flag(0)
                T.copy(W[bx * block_M + vid * half, by * block_N], c_ub)
                for i in T.serial(half):
                    T.tile.add(c_ub[i, :], c_ub[i, :], bias_ub)
                T.tile.relu(c_ub, c_ub)
                T.copy(c_ub, C[bx * block_M + vid * half, by * block_N])

    return main


def run(M, N, K, seed=5):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.5).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    cycles = {}
    dev = gemm_bias_relu(M, N, K)
    w = np.zeros((M, N), np.float32)
    c = dev(a, b, bias)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-3, atol=1e-3)
    cycles["developer"] = dev.info()["cycles"]
    exp = gemm_bias_relu_expert(M, N, K)
    c = exp(a, b, bias, w)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-3, atol=1e-3)
    cycles["expert"] = exp.info()["cycles"]
    return cycles


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=512)
    args = ap.parse_args(argv)
    cycles = run(args.m, args.n, args.k)
    print(f"simulated cycles (A2): developer {cycles['developer']:.0f}, expert {cycles['expert']:.0f} "
          f"({cycles['developer'] / cycles['expert']:.3f}x)")
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
