"""TileLang kernels shared by the test areas (frontend, e2e, runtime, cpu, cuda) and the GPU benchmarks,
written as TileLang users write them (GPU idiom: threads, shared and fragment buffers). Each builder
returns a @T.prim_func; the areas wrap them with their own defaults and names.

Importers put this directory on sys.path (tests/python), e.g.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))"""
import tilelang.language as T


def add_1d(N, block=256, dtype="float32"):
    """C = A + B indexing the global tensors inside T.Parallel (the compiler guards the tail)."""
    @T.prim_func
    def add(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return add


def gemm(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float32", out_dtype=None, trans_A=False,
         trans_B=False, num_stages=2, threads=128, swizzle_panel=0, swizzle_order="row", policy=None,
         accumulate=False, cluster=None):
    """C = op(A) @ op(B) (+ C's old value with accumulate=True), pipelined over K; M may be a T.dynamic
    dimension. swizzle_panel > 0 rasterizes the block order (T.use_swizzle); cluster=c launches
    thread-block clusters of c CTAs along x (they share the A tile)."""
    out_dtype = out_dtype or dtype
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)
    pol = policy or T.GemmWarpPolicy.Square

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads, cluster_dims=cluster) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            if swizzle_panel:
                T.use_swizzle(panel_size=swizzle_panel, order=swizzle_order)
            if accumulate:
                T.copy(C[by * block_M, bx * block_N], C_local)
            else:
                T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B, policy=pol)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return main


def softmax(M, N, block_M=4, dtype="float32"):
    """Whole rows in one tile; rows past M in the last block are never stored."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_local = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(A[bx * block_M, 0], A_local)
            T.reduce_max(A_local, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] = T.exp(A_local[i, j] - row_max[i])
            T.reduce_sum(A_local, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] = A_local[i, j] / row_sum[i]
            T.copy(A_local, B[bx * block_M, 0])
    return main


def layer_norm(M, N, blk_m=4, eps=1e-5):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), gamma: T.Tensor((N,), "float16"), beta: T.Tensor((N,), "float16"),
             Y: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            x = T.alloc_fragment((blk_m, N), "float32")
            mean = T.alloc_fragment((blk_m,), "float32")
            var = T.alloc_fragment((blk_m,), "float32")
            sq = T.alloc_fragment((blk_m, N), "float32")
            T.copy(X[bx * blk_m, 0], x)
            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(blk_m):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(blk_m, N):
                sq[i, j] = (x[i, j] - mean[i]) * (x[i, j] - mean[i])
            T.reduce_sum(sq, var, dim=1)
            for i, j in T.Parallel(blk_m, N):
                x[i, j] = (x[i, j] - mean[i]) * T.rsqrt(var[i] / N + eps) * gamma[j] + beta[j]
            T.copy(x, Y[bx * blk_m, 0])
    return main


def flashattn(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, num_stages=2, threads=128):
    """Flash attention forward ([batch, seq_len, heads, dim] float16), with its steps as T.macro."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [batch, seq_len, heads, dim]
    dtype = "float16"
    accum_dtype = "float"

    @T.macro
    def MMA0(K: T.Tensor(shape, dtype), Q_shared, K_shared, acc_s, k, bx, by, bz):  # noqa: N802,N803
        T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
        if is_causal:
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(acc_s.dtype))
        else:
            T.clear(acc_s)
        T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

    @T.macro
    def MMA1(V: T.Tensor(shape, dtype), V_shared, acc_s_cast, acc_o, k, by, bz):  # noqa: N802,N803
        T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
        T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

    @T.macro
    def Softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum):  # noqa: N802
        T.copy(scores_max, scores_max_prev)
        # The running maximum over all blocks so far: a row that this block masks entirely keeps a
        # finite maximum (clearing it to -inf first would give exp2(-inf - -inf) = NaN there).
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
        for i in T.Parallel(block_M):
            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
        for i, j in T.Parallel(block_M, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
        T.reduce_sum(acc_s, scores_sum, dim=1)
        for i in T.Parallel(block_M):
            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
        T.copy(acc_s, acc_s_cast)

    @T.macro
    def Rescale(acc_o, scores_scale):  # noqa: N802
        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] *= scores_scale[i]

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),  # noqa: N803
             Output: T.Tensor(shape, dtype)):  # noqa: N803
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))
            loop_range = (T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                          if is_causal else T.ceildiv(seq_len, block_N))
            for k in T.Pipelined(loop_range, num_stages=num_stages):
                MMA0(K, Q_shared, K_shared, acc_s, k, bx, by, bz)
                Softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum)
                Rescale(acc_o, scores_scale)
                MMA1(V, V_shared, acc_s_cast, acc_o, k, by, bz)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])
    return main
