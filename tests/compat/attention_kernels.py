"""Attention kernels written like TileLang's flash-attention examples (builders only: no torch here,
so tests/python/cuda/test_compat_kernels.py can run them on the cuda emulator in CI). The tests
are tests/compat/test_attention.py."""
import tilelang
import tilelang.language as T

FAST = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}
LOG2E = 1.44269504


def flash_fwd_body(batch, heads, seq_len, dim, is_causal, block_M, block_N, num_stages, threads, with_lse):
    scale = (1.0 / dim) ** 0.5 * LOG2E
    shape = [batch, heads, seq_len, dim]
    dtype, accum = T.float16, T.float32

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype), lse: T.Tensor([batch, heads, seq_len], accum)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum)
            m = T.alloc_fragment([block_M], accum)
            m_prev = T.alloc_fragment([block_M], accum)
            alpha = T.alloc_fragment([block_M], accum)
            row_sum = T.alloc_fragment([block_M], accum)
            logsum = T.alloc_fragment([block_M], accum)

            T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(m, -T.infinity(accum))
            n_blocks = T.ceildiv((bx + 1) * block_M, block_N) if is_causal else T.ceildiv(seq_len, block_N)
            for k in T.Pipelined(n_blocks, num_stages=num_stages):
                T.copy(K[bz, by, k * block_N:(k + 1) * block_N, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(accum))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(V[bz, by, k * block_N:(k + 1) * block_N, :], V_shared)
                T.copy(m, m_prev)
                T.reduce_max(acc_s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    alpha[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= alpha[i]
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m[i] * scale)
                T.copy(acc_s, acc_s_cast)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
                T.reduce_sum(acc_s, row_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * alpha[i] + row_sum[i]
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, by, bx * block_M:(bx + 1) * block_M, :])
            if with_lse:
                for i in T.Parallel(block_M):
                    logsum[i] = T.log2(logsum[i]) + m[i] * scale
                T.copy(logsum, lse[bz, by, bx * block_M:(bx + 1) * block_M])

    return main


@tilelang.jit(out_idx=[3, 4], pass_configs=FAST)
def flash_fwd(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, num_stages=1, threads=128):
    return flash_fwd_body(batch, heads, seq_len, dim, is_causal, block_M, block_N, num_stages, threads, True)


def configs():
    return [dict(block_M=bm, block_N=bn, num_stages=s, threads=128) for bm, bn, s in ((64, 64, 1), (64, 32, 2))]


@tilelang.autotune(configs=configs(), warmup=1, rep=2)
@tilelang.jit(out_idx=[3, 4], pass_configs=FAST)
def flash_fwd_tuned(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, num_stages=1, threads=128):
    return flash_fwd_body(batch, heads, seq_len, dim, is_causal, block_M, block_N, num_stages, threads, True)


@tilelang.jit(out_idx=[2], pass_configs=FAST)
def bwd_preprocess(batch, heads, seq_len, dim, blk=32):
    shape = [batch, heads, seq_len, dim]

    @T.prim_func
    def main(O: T.Tensor(shape, T.float16), dO: T.Tensor(shape, T.float16),
             Delta: T.Tensor([batch, heads, seq_len], T.float32)):
        with T.Kernel(heads, T.ceildiv(seq_len, blk), batch) as (bx, by, bz):
            o = T.alloc_fragment([blk, blk], T.float16)
            do = T.alloc_fragment([blk, blk], T.float16)
            acc = T.alloc_fragment([blk, blk], T.float32)
            delta = T.alloc_fragment([blk], T.float32)
            T.clear(acc)
            for k in range(T.ceildiv(dim, blk)):
                T.copy(O[bz, bx, by * blk:(by + 1) * blk, k * blk:(k + 1) * blk], o)
                T.copy(dO[bz, bx, by * blk:(by + 1) * blk, k * blk:(k + 1) * blk], do)
                for i, j in T.Parallel(blk, blk):
                    acc[i, j] += o[i, j] * do[i, j]
            T.reduce_sum(acc, delta, 1)
            T.copy(delta, Delta[bz, bx, by * blk:(by + 1) * blk])

    return main


def make_dq_layout(dQ):
    # TileLang's example stores dQ in the order of the 8x8 mma fragment (atomics cannot be
    # vectorized); the postprocess kernel reads it back through the same layout.
    return T.Layout(dQ.shape, lambda b, h, l, d: [b, h, l // 8, d // 8, (d % 2), 4 * (l % 8) + (d % 8) // 2])


@tilelang.jit(out_idx=[1], pass_configs=FAST)
def bwd_postprocess(batch, heads, seq_len, dim, blk=64):
    shape = [batch, heads, seq_len, dim]

    @T.prim_func
    def main(dQ: T.Tensor(shape, T.float32), dQ_out: T.Tensor(shape, T.float16)):
        with T.Kernel(T.ceildiv(seq_len, blk), heads, batch, threads=128) as (bx, by, bz):
            T.annotate_layout({dQ: make_dq_layout(dQ)})
            T.copy(dQ[bz, by, bx * blk:(bx + 1) * blk, :], dQ_out[bz, by, bx * blk:(bx + 1) * blk, :])

    return main


@tilelang.jit(pass_configs=FAST)
def bwd_dkdv(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64):
    sm_scale = (1.0 / dim) ** 0.5
    scale = sm_scale * LOG2E
    shape = [batch, heads, seq_len, dim]
    dtype, accum = T.float16, T.float32

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             dO: T.Tensor(shape, dtype), lse: T.Tensor([batch, heads, seq_len], accum),
             Delta: T.Tensor([batch, heads, seq_len], accum), dQ: T.Tensor(shape, accum),
             dK: T.Tensor(shape, dtype), dV: T.Tensor(shape, dtype)):
        with T.Kernel(heads, T.ceildiv(seq_len, block_M), batch, threads=128) as (bx, by, bz):
            K_shared = T.alloc_shared([block_M, dim], dtype)
            V_shared = T.alloc_shared([block_M, dim], dtype)
            dsT_shared = T.alloc_shared([block_M, block_N], dtype)
            q = T.alloc_shared([block_N, dim], dtype)
            do = T.alloc_shared([block_N, dim], dtype)
            lse_shared = T.alloc_shared([block_N], accum)
            delta = T.alloc_shared([block_N], accum)
            qkT = T.alloc_fragment([block_M, block_N], accum)
            dsT = T.alloc_fragment([block_M, block_N], accum)
            qkT_cast = T.alloc_fragment([block_M, block_N], dtype)
            dsT_cast = T.alloc_fragment([block_M, block_N], dtype)
            dv = T.alloc_fragment([block_M, dim], accum)
            dk = T.alloc_fragment([block_M, dim], accum)
            dq = T.alloc_fragment([block_N, dim], accum)

            T.annotate_layout({dQ: make_dq_layout(dQ)})
            T.copy(K[bz, bx, by * block_M:(by + 1) * block_M, :], K_shared)
            T.copy(V[bz, bx, by * block_M:(by + 1) * block_M, :], V_shared)
            T.clear(dv)
            T.clear(dk)
            loop_st = T.floordiv(by * block_M, block_N) if is_causal else 0
            for k in T.Pipelined(loop_st, T.ceildiv(seq_len, block_N), num_stages=2):
                T.copy(Q[bz, bx, k * block_N:(k + 1) * block_N, :], q)
                T.clear(qkT)
                T.gemm(K_shared, q, qkT, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(lse[bz, bx, k * block_N:(k + 1) * block_N], lse_shared)
                for i, j in T.Parallel(block_M, block_N):
                    qkT[i, j] = T.exp2(qkT[i, j] * scale - lse_shared[j])
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        qkT[i, j] = T.if_then_else(by * block_M + i <= k * block_N + j, qkT[i, j], 0)
                T.copy(dO[bz, bx, k * block_N:(k + 1) * block_N, :], do)
                T.clear(dsT)
                T.gemm(V_shared, do, dsT, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(qkT, qkT_cast)
                T.gemm(qkT_cast, do, dv, policy=T.GemmWarpPolicy.FullRow)
                T.copy(Delta[bz, bx, k * block_N:(k + 1) * block_N], delta)
                for i, j in T.Parallel(block_M, block_N):
                    dsT_cast[i, j] = qkT[i, j] * (dsT[i, j] - delta[j]) * sm_scale
                T.gemm(dsT_cast, q, dk, policy=T.GemmWarpPolicy.FullRow)
                T.copy(dsT_cast, dsT_shared)
                T.clear(dq)
                T.gemm(dsT_shared, K_shared, dq, transpose_A=True)
                for i, j in T.Parallel(block_N, dim):
                    T.atomic_add(dQ[bz, bx, k * block_N + i, j], dq[i, j])
            T.copy(dv, dV[bz, bx, by * block_M:(by + 1) * block_M, :])
            T.copy(dk, dK[bz, bx, by * block_M:(by + 1) * block_M, :])

    return main


@tilelang.jit(out_idx=[4], pass_configs=FAST)
def blocksparse_attention(batch, heads, seq_len, dim, n_blocks, is_causal, block=64):
    scale = (1.0 / dim) ** 0.5 * LOG2E
    shape = [batch, heads, seq_len, dim]
    dtype, accum = T.float16, T.float32

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             BlockMask: T.Tensor([batch, heads, n_blocks, n_blocks], T.bool), Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared([block, dim], dtype)
            K_shared = T.alloc_shared([block, dim], dtype)
            V_shared = T.alloc_shared([block, dim], dtype)
            acc_s = T.alloc_fragment([block, block], accum)
            acc_s_cast = T.alloc_fragment([block, block], dtype)
            acc_o = T.alloc_fragment([block, dim], accum)
            m = T.alloc_fragment([block], accum)
            m_prev = T.alloc_fragment([block], accum)
            alpha = T.alloc_fragment([block], accum)
            row_sum = T.alloc_fragment([block], accum)
            logsum = T.alloc_fragment([block], accum)
            block_mask = T.alloc_fragment([n_blocks], T.bool)

            T.copy(Q[bz, by, bx * block:(bx + 1) * block, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(m, -T.infinity(accum))
            T.copy(BlockMask[bz, by, bx, :], block_mask)
            n = T.min(T.ceildiv(seq_len, block), bx + 1) if is_causal else T.ceildiv(seq_len, block)
            for k in T.Pipelined(n, num_stages=1):
                if block_mask[k] != 0:
                    T.copy(K[bz, by, k * block:(k + 1) * block, :], K_shared)
                    if is_causal:
                        for i, j in T.Parallel(block, block):
                            acc_s[i, j] = T.if_then_else(bx * block + i >= k * block + j, 0, -T.infinity(accum))
                    else:
                        T.clear(acc_s)
                    T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                    T.copy(m, m_prev)
                    T.fill(m, -T.infinity(accum))
                    T.reduce_max(acc_s, m, dim=1, clear=False)
                    for i in T.Parallel(block):
                        m[i] = T.max(m[i], m_prev[i])
                    for i in T.Parallel(block):
                        alpha[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                    for i, j in T.Parallel(block, block):
                        acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m[i] * scale)
                    T.reduce_sum(acc_s, row_sum, dim=1)
                    for i in T.Parallel(block):
                        logsum[i] = logsum[i] * alpha[i] + row_sum[i]
                    T.copy(acc_s, acc_s_cast)
                    for i, j in T.Parallel(block, dim):
                        acc_o[i, j] *= alpha[i]
                    T.copy(V[bz, by, k * block:(k + 1) * block, :], V_shared)
                    T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, by, bx * block:(bx + 1) * block, :])

    return main
