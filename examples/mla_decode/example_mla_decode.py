"""Multi-head latent attention (MLA, DeepSeek-V2/V3) decoding, in the absorbed form.

With the key/value up-projections absorbed into the query and output projections, every query head
attends to one shared latent cache: keys are [c_kv, k_pe] (the latent vector, dim 512, and a rotary
part, pe_dim 64) and values are c_kv itself. One decoding step of `heads` query heads against a
cache of kv_len tokens per sequence:

    S = (Q c_kv^T + Q_pe k_pe^T) * (dim + pe_dim) ** -0.5,   P = softmax(S),   O = P c_kv.

Each block owns block_H query heads of one sequence (their Q and Q_pe stay in shared memory) and
streams the cache in blocks of block_N tokens through a T.Pipelined loop, with the online softmax
of flash attention (running row maximum, exp2 with the scale folded in, rescaled accumulator).
The heads are split over the warps by columns (policy FullCol: a block has few rows), so P goes
through shared memory between the softmax and the P c_kv GEMM.

Paged cache (page_size=P): the cache is a pool of pages of P tokens, KV [num_pages * P, dim] and
K_pe [num_pages * P, pe_dim], and block_table[b, i] is the page holding tokens i*P .. i*P + P - 1 of
sequence b (block_N divides P, so a block of tokens never straddles two pages). The rows of the last
page past kv_len are read too (their scores are masked to -inf, so they weigh 0): they must hold finite
values, as a freshly zeroed pool does.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def mla_decode(batch, heads, kv_len, dim=512, pe_dim=64, block_N=64, block_H=64, num_stages=2, threads=256,
               page_size=None, num_pages=None):
    if page_size is not None:
        return mla_decode_paged(batch, heads, kv_len, dim, pe_dim, block_N, block_H, num_stages, threads, page_size,
                                num_pages)
    scale = (dim + pe_dim) ** -0.5 * 1.44269504  # log2(e): exp(x) = exp2(x * log2(e))
    dtype = "float16"
    accum_dtype = "float32"
    kv_tail = kv_len % block_N != 0
    assert heads % block_H == 0, "heads must be a multiple of block_H"

    @T.prim_func
    def main(Q: T.Tensor((batch, heads, dim), dtype), Q_pe: T.Tensor((batch, heads, pe_dim), dtype),
             KV: T.Tensor((batch, kv_len, dim), dtype), K_pe: T.Tensor((batch, kv_len, pe_dim), dtype),
             Output: T.Tensor((batch, heads, dim), dtype)):
        with T.Kernel(heads // block_H, batch, threads=threads) as (hx, b):
            Q_shared = T.alloc_shared((block_H, dim), dtype)
            Q_pe_shared = T.alloc_shared((block_H, pe_dim), dtype)
            KV_shared = T.alloc_shared((block_N, dim), dtype)
            K_pe_shared = T.alloc_shared((block_N, pe_dim), dtype)
            P_shared = T.alloc_shared((block_H, block_N), dtype)
            acc_s = T.alloc_fragment((block_H, block_N), accum_dtype)
            acc_o = T.alloc_fragment((block_H, dim), accum_dtype)
            row_max = T.alloc_fragment((block_H,), accum_dtype)
            row_max_prev = T.alloc_fragment((block_H,), accum_dtype)
            row_scale = T.alloc_fragment((block_H,), accum_dtype)
            row_sum = T.alloc_fragment((block_H,), accum_dtype)
            denom = T.alloc_fragment((block_H,), accum_dtype)

            T.copy(Q[b, hx * block_H, 0], Q_shared)
            T.copy(Q_pe[b, hx * block_H, 0], Q_pe_shared)
            T.fill(acc_o, 0)
            T.fill(denom, 0)
            T.fill(row_max, -T.infinity(accum_dtype))

            for k in T.Pipelined(T.ceildiv(kv_len, block_N), num_stages=num_stages):
                T.copy(KV[b, k * block_N, 0], KV_shared)
                T.copy(K_pe[b, k * block_N, 0], K_pe_shared)
                # Scores start at 0 for cached tokens and at -inf past the end of the cache.
                if kv_tail:
                    for i, j in T.Parallel(block_H, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j < kv_len, 0, -T.infinity(accum_dtype))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(Q_pe_shared, K_pe_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                # Online softmax: running maximum, rescale factor of the earlier blocks, P.
                T.copy(row_max, row_max_prev)
                T.reduce_max(acc_s, row_max, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    row_scale[i] = T.exp2(row_max_prev[i] * scale - row_max[i] * scale)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(acc_s, row_sum, dim=1)
                for i in T.Parallel(block_H):
                    denom[i] = denom[i] * row_scale[i] + row_sum[i]
                T.copy(acc_s, P_shared)
                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] *= row_scale[i]
                T.gemm(P_shared, KV_shared, acc_o, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(block_H, dim):
                acc_o[i, j] /= denom[i]
            T.copy(acc_o, Output[b, hx * block_H, 0])

    return main


def mla_decode_paged(batch, heads, kv_len, dim, pe_dim, block_N, block_H, num_stages, threads, page_size, num_pages):
    """The same decoding step over a paged cache (see the module docstring)."""
    scale = (dim + pe_dim) ** -0.5 * 1.44269504
    dtype = "float16"
    accum_dtype = "float32"
    kv_tail = kv_len % block_N != 0
    pages_per_seq = (kv_len + page_size - 1) // page_size
    num_pages = num_pages or batch * pages_per_seq
    assert heads % block_H == 0, "heads must be a multiple of block_H"
    assert page_size % block_N == 0, "block_N must divide page_size"

    @T.prim_func
    def main(Q: T.Tensor((batch, heads, dim), dtype), Q_pe: T.Tensor((batch, heads, pe_dim), dtype),
             KV: T.Tensor((num_pages * page_size, dim), dtype), K_pe: T.Tensor((num_pages * page_size, pe_dim), dtype),
             block_table: T.Tensor((batch, pages_per_seq), "int32"), Output: T.Tensor((batch, heads, dim), dtype)):
        with T.Kernel(heads // block_H, batch, threads=threads) as (hx, b):
            Q_shared = T.alloc_shared((block_H, dim), dtype)
            Q_pe_shared = T.alloc_shared((block_H, pe_dim), dtype)
            KV_shared = T.alloc_shared((block_N, dim), dtype)
            K_pe_shared = T.alloc_shared((block_N, pe_dim), dtype)
            P_shared = T.alloc_shared((block_H, block_N), dtype)
            acc_s = T.alloc_fragment((block_H, block_N), accum_dtype)
            acc_o = T.alloc_fragment((block_H, dim), accum_dtype)
            row_max = T.alloc_fragment((block_H,), accum_dtype)
            row_max_prev = T.alloc_fragment((block_H,), accum_dtype)
            row_scale = T.alloc_fragment((block_H,), accum_dtype)
            row_sum = T.alloc_fragment((block_H,), accum_dtype)
            denom = T.alloc_fragment((block_H,), accum_dtype)

            T.copy(Q[b, hx * block_H, 0], Q_shared)
            T.copy(Q_pe[b, hx * block_H, 0], Q_pe_shared)
            T.fill(acc_o, 0)
            T.fill(denom, 0)
            T.fill(row_max, -T.infinity(accum_dtype))

            for k in T.Pipelined(T.ceildiv(kv_len, block_N), num_stages=num_stages):
                # The block's first row in the page pool (written out in each copy, not bound to a
                # name, so that the copies stay producers of the pipeline: a name bound in the loop
                # body is computed by the consumers).
                T.copy(KV[block_table[b, k * block_N // page_size] * page_size + k * block_N % page_size, 0], KV_shared)
                T.copy(K_pe[block_table[b, k * block_N // page_size] * page_size + k * block_N % page_size, 0],
                       K_pe_shared)
                if kv_tail:
                    for i, j in T.Parallel(block_H, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j < kv_len, 0, -T.infinity(accum_dtype))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(Q_pe_shared, K_pe_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(row_max, row_max_prev)
                T.reduce_max(acc_s, row_max, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    row_scale[i] = T.exp2(row_max_prev[i] * scale - row_max[i] * scale)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(acc_s, row_sum, dim=1)
                for i in T.Parallel(block_H):
                    denom[i] = denom[i] * row_scale[i] + row_sum[i]
                T.copy(acc_s, P_shared)
                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] *= row_scale[i]
                T.gemm(P_shared, KV_shared, acc_o, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(block_H, dim):
                acc_o[i, j] /= denom[i]
            T.copy(acc_o, Output[b, hx * block_H, 0])

    return main


def paged_cache(kv, k_pe, page_size, rng):
    """Scatters the contiguous caches [batch, kv_len, d] over a shuffled pool of pages (zeros past
    kv_len, one spare page): returns the pools and the block table."""
    batch, kv_len = kv.shape[:2]
    per_seq = (kv_len + page_size - 1) // page_size
    num_pages = batch * per_seq + 1
    table = rng.permutation(num_pages)[:batch * per_seq].reshape(batch, per_seq).astype(np.int32)
    pools = []
    for t in (kv, k_pe):
        pool = np.zeros((num_pages * page_size, t.shape[2]), t.dtype)
        padded = np.zeros((batch, per_seq * page_size, t.shape[2]), t.dtype)
        padded[:, :kv_len] = t
        for b in range(batch):
            for i in range(per_seq):
                pool[table[b, i] * page_size:(table[b, i] + 1) * page_size] = padded[b, i * page_size:(i + 1) * page_size]
        pools.append(pool)
    return pools[0], pools[1], table, num_pages


def kernels():
    """Small instances for the compile-only tests."""
    return {"mla_decode": mla_decode(2, 64, 256, dim=128, pe_dim=64)}


# --- host side: random inputs, numpy reference in float64 ------------------------------------------


def reference(q, q_pe, kv, k_pe):
    q, q_pe, kv, k_pe = (t.astype(np.float64) for t in (q, q_pe, kv, k_pe))
    scores = (np.einsum("bhd,bsd->bhs", q, kv) + np.einsum("bhd,bsd->bhs", q_pe, k_pe))
    scores /= np.sqrt(q.shape[-1] + q_pe.shape[-1])
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.einsum("bhs,bsd->bhd", p / p.sum(axis=-1, keepdims=True), kv)


def flops(batch, heads, kv_len, dim, pe_dim):
    return 2.0 * batch * heads * kv_len * (dim + pe_dim) + 2.0 * batch * heads * kv_len * dim


def main(batch=2, heads=64, kv_len=512, dim=512, pe_dim=64, block_N=64, block_H=64, page_size=None, target="auto"):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((batch, heads, dim)).astype(np.float16)
    q_pe = rng.standard_normal((batch, heads, pe_dim)).astype(np.float16)
    kv = rng.standard_normal((batch, kv_len, dim)).astype(np.float16)
    k_pe = rng.standard_normal((batch, kv_len, pe_dim)).astype(np.float16)
    if page_size is None:
        kernel = tilelang.jit(out_idx=[4], target=target)(mla_decode)(batch, heads, kv_len, dim, pe_dim, block_N,
                                                                      block_H)
        o = kernel(q, q_pe, kv, k_pe).astype(np.float64)
    else:
        kv_pool, k_pe_pool, table, num_pages = paged_cache(kv, k_pe, page_size, rng)
        kernel = tilelang.jit(out_idx=[5], target=target)(mla_decode)(batch, heads, kv_len, dim, pe_dim, block_N,
                                                                      block_H, page_size=page_size,
                                                                      num_pages=num_pages)
        o = kernel(q, q_pe, kv_pool, k_pe_pool, table).astype(np.float64)
    ref = reference(q, q_pe, kv, k_pe)
    if not np.allclose(o, ref, rtol=3e-3, atol=3e-3):
        err = np.abs(o - ref)
        worst = np.unravel_index(int(np.argmax(err)), err.shape)
        print(f"Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: got {o[worst]!r}, "
              f"expected {ref[worst]!r}")
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--heads", type=int, default=64)
    parser.add_argument("--kv_len", type=int, default=512)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--pe_dim", type=int, default=64)
    parser.add_argument("--page_size", type=int, default=None, help="paged cache with pages of this many tokens")
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.batch, args.heads, args.kv_len, args.dim, args.pe_dim, page_size=args.page_size, target=args.target)
