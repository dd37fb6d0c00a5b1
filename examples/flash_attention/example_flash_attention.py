"""Flash-attention forward (multi-head, [batch, heads, seq_len, dim] layout), causal or not.

O = softmax(Q K^T / sqrt(dim) [+ causal mask]) V without ever materializing the seq_len x seq_len
score matrix. Each block owns block_M query rows of one (batch, head): Q stays in shared memory
while a T.Pipelined loop streams blocks of K and V. Per K/V block:
  acc_s  = Q K^T                          (T.gemm with transpose_B=True, float32 accumulate)
  m_new  = max(m_old, rowmax(acc_s))      (T.reduce_max with clear=False)
  P      = exp2((acc_s - m_new) * scale)  (scale = log2(e) / sqrt(dim): exp via exp2)
  l      = l * exp2((m_old - m_new) * scale) + rowsum(P)
  acc_o  = acc_o * exp2((m_old - m_new) * scale) + P V
and at the end O = acc_o / l. Masked scores (future keys when causal, keys past seq_len in a last
partial block) are set to -inf before the GEMM adds Q K^T to them. With is_causal the loop stops at
the last K/V block a query of this block can see.
"""
import argparse
import math
import sys

import numpy as np

import tilelang
import tilelang.language as T


def flashattn(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, num_stages=1, threads=128):
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e): exp(x) = exp2(x * log2(e))
    shape = (batch, heads, seq_len, dim)
    dtype = "float16"
    accum_dtype = "float32"
    kv_tail = seq_len % block_N != 0

    @T.macro
    def qk_scores(K, Q_shared, K_shared, acc_s, k, bx, by, bz):
        T.copy(K[bz, by, k * block_N, 0], K_shared)
        # acc_s starts at 0 where the key is visible and at -inf where it is masked; the GEMM adds Q K^T.
        if is_causal:
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.if_then_else(
                    (bx * block_M + i >= k * block_N + j) and (k * block_N + j < seq_len), 0,
                    -T.infinity(accum_dtype))
        elif kv_tail:
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.if_then_else(k * block_N + j < seq_len, 0, -T.infinity(accum_dtype))
        else:
            T.clear(acc_s)
        T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

    @T.macro
    def online_softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum):
        T.copy(scores_max, scores_max_prev)
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)  # running max over all blocks so far
        for i in T.Parallel(block_M):
            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
        for i, j in T.Parallel(block_M, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
        T.reduce_sum(acc_s, scores_sum, dim=1)
        for i in T.Parallel(block_M):
            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
        T.copy(acc_s, acc_s_cast)

    @T.macro
    def rescale(acc_o, scores_scale):
        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] *= scores_scale[i]

    @T.macro
    def pv(V, V_shared, acc_s_cast, acc_o, k, by, bz):
        T.copy(V[bz, by, k * block_N, 0], V_shared)
        T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            O_shared = T.alloc_shared((block_M, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            scores_max = T.alloc_fragment((block_M,), accum_dtype)
            scores_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            scores_scale = T.alloc_fragment((block_M,), accum_dtype)
            scores_sum = T.alloc_fragment((block_M,), accum_dtype)
            logsum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(Q[bz, by, bx * block_M, 0], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = (T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                          if is_causal else T.ceildiv(seq_len, block_N))
            for k in T.Pipelined(loop_range, num_stages=num_stages):
                qk_scores(K, Q_shared, K_shared, acc_s, k, bx, by, bz)
                online_softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum)
                rescale(acc_o, scores_scale)
                pv(V, V_shared, acc_s_cast, acc_o, k, by, bz)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, by, bx * block_M, 0])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def reference(q, k, v, is_causal):
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if is_causal:
        seq = q.shape[2]
        scores = np.where(np.tril(np.ones((seq, seq), dtype=bool)), scores, -np.inf)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", scores / scores.sum(axis=-1, keepdims=True), v)


def main(batch=1, heads=4, seq_len=1024, dim=64, causal=(False, True), block_M=64, block_N=64, target="auto"):
    rng = np.random.default_rng(0)
    shape = (batch, heads, seq_len, dim)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    ok = True
    for is_causal in causal:
        kernel = tilelang.jit(out_idx=[3], target=target)(flashattn)(
            batch, heads, seq_len, dim, is_causal, block_M, block_N)
        o = kernel(q, k, v).astype(np.float64)
        ref = reference(q, k, v, is_causal)
        if not np.allclose(o, ref, rtol=3e-3, atol=3e-3):
            err = np.abs(o - ref)
            worst = np.unravel_index(int(np.argmax(err)), err.shape)
            print(f"causal={is_causal}: Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
                  f"got {o[worst]!r}, expected {ref[worst]!r}")
            ok = False
    if not ok:
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq_len", type=int, default=1024)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--is_causal", action="store_true", help="only the causal kernel (default: both)")
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.batch, args.heads, args.seq_len, args.dim, causal=(True,) if args.is_causal else (False, True),
         target=args.target)
