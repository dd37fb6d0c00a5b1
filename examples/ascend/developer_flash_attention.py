"""Flash-attention forward in Developer mode, written as on a GPU: shared and fragment buffers,
T.gemm for S = Q K^T and O = P V, the online softmax in T.Parallel / T.reduce_* — no scopes, no
workspaces, no flags, no vid. The compiler finds the three cube<->vector hand-offs per K/V step
(S: L0C -> UB, P: UB -> L1, P V: L0C -> UB), routes each through a GM workspace with cross-core
flags at the K/V loop (and back flags so that a workspace is not overwritten before it is read),
splits the vector work between the two vector cores by rows and inserts the intra-core syncs.
The example prints the simulated time next to the Expert version (flash_attention_fwd.py)."""
import argparse
import math

import numpy as np

import tilelang
import tilelang.language as T

import flash_attention_fwd


@tilelang.jit(out_idx=[3], target="npuir")
def flash_attention(BH, S, D=64, block_M=64, block_N=64, dtype="float16", accum_dtype="float"):
    q_tiles = S // block_M
    scale = 1.0 / math.sqrt(D)

    @T.prim_func
    def main(Q: T.Tensor((BH, S, D), dtype), K: T.Tensor((BH, S, D), dtype), V: T.Tensor((BH, S, D), dtype),
             O: T.Tensor((BH, S, D), dtype)):
        with T.Kernel(BH * q_tiles, is_npu=True) as cid:
            bh = cid // q_tiles
            mq = cid % q_tiles
            q_s = T.alloc_shared((block_M, D), dtype)
            k_s = T.alloc_shared((block_N, D), dtype)
            v_s = T.alloc_shared((block_N, D), dtype)
            p_s = T.alloc_shared((block_M, block_N), dtype)
            s_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            o_f = T.alloc_fragment((block_M, D), accum_dtype)
            sc = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc = T.alloc_fragment((block_M, D), accum_dtype)
            out = T.alloc_fragment((block_M, D), dtype)
            m = T.alloc_fragment((block_M,), accum_dtype)
            m_new = T.alloc_fragment((block_M,), accum_dtype)
            alpha = T.alloc_fragment((block_M,), accum_dtype)
            l = T.alloc_fragment((block_M,), accum_dtype)
            rs = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(Q[bh, mq * block_M, 0], q_s)
            T.fill(m, -T.infinity(accum_dtype))
            T.fill(l, 0.0)
            T.fill(acc, 0.0)
            for j in T.serial(S // block_N):
                T.copy(K[bh, j * block_N, 0], k_s)
                T.gemm(q_s, k_s, s_f, transpose_B=True, initC=True)
                for i, jj in T.Parallel(block_M, block_N):
                    sc[i, jj] = s_f[i, jj] * scale
                T.reduce_max(sc, m_new, dim=-1)
                for i in T.Parallel(block_M):
                    m_new[i] = T.max(m_new[i], m[i])
                for i in T.Parallel(block_M):
                    alpha[i] = T.exp(m[i] - m_new[i])
                for i in T.Parallel(block_M):
                    m[i] = m_new[i]
                for i, jj in T.Parallel(block_M, block_N):
                    sc[i, jj] = T.exp(sc[i, jj] - m_new[i])
                T.reduce_sum(sc, rs, dim=-1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * alpha[i] + rs[i]
                for i, jj in T.Parallel(block_M, block_N):
                    p_s[i, jj] = sc[i, jj]
                T.copy(V[bh, j * block_N, 0], v_s)
                T.gemm(p_s, v_s, o_f, initC=True)
                for i, d in T.Parallel(block_M, D):
                    acc[i, d] = acc[i, d] * alpha[i] + o_f[i, d]
            for i, d in T.Parallel(block_M, D):
                acc[i, d] = acc[i, d] / l[i]
            for i, d in T.Parallel(block_M, D):
                out[i, d] = acc[i, d]
            T.copy(out, O[bh, mq * block_M, 0])

    return main


def run(BH, S, D=64, seed=8):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((BH, S, D)).astype(np.float16) for _ in range(3))
    ref = flash_attention_fwd.reference(q, k, v)
    cycles = {}
    for name, kern in (("developer", flash_attention(BH, S, D)), ("expert", flash_attention_fwd.flash_attention(BH, S, D))):
        o = kern(q, k, v)
        np.testing.assert_allclose(o.astype(np.float64), ref, rtol=2e-2, atol=2e-3)
        cycles[name] = kern.info()["cycles"]
    return cycles


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--bh", type=int, default=2)
    ap.add_argument("--seq", type=int, default=256)
    args = ap.parse_args(argv)
    cycles = run(args.bh, args.seq)
    print(f"simulated cycles (A2): developer {cycles['developer']:.0f}, expert {cycles['expert']:.0f} "
          f"({cycles['developer'] / cycles['expert']:.3f}x)")
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
