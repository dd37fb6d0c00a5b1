"""TileLang-style kernels (GPU idiom: threads=128, shared and fragment buffers) used by the cuda
tests and the GPU benchmarks. Each builder returns a @T.prim_func."""
import tilelang.language as T


def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32", out_dtype=None,
           num_stages=3, trans_A=False, trans_B=False, threads=128, swizzle_panel=0, policy=None):
    out_dtype = out_dtype or dtype
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)
    pol = policy or T.GemmWarpPolicy.Square

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            if swizzle_panel:
                T.use_swizzle(panel_size=swizzle_panel)
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


def matmul_dynamic_m(N, K, block_M=64, block_N=64, block_K=32, dtype="float16", num_stages=2):
    m = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((m, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((m, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(m, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return main


def softmax(M, N, block_M=4, dtype="float32"):
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


def rms_norm(M, N, blk_m=2, dtype="float32", eps=1e-6):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, N), dtype)
            A_local = T.alloc_fragment((blk_m, N), "float32")
            A_pow = T.alloc_fragment((blk_m, N), "float32")
            A_powsum = T.alloc_fragment((blk_m,), "float32")
            T.copy(A[bx * blk_m, 0], A_shared)
            T.copy(A_shared, A_local)
            for i, j in T.Parallel(blk_m, N):
                A_pow[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] = A_local[i, j] * A_powsum[i] * W[j]
            T.copy(A_local, B[bx * blk_m, 0])
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


def elementwise_add(M, N, block_M=32, block_N=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                if by * block_M + i < M and bx * block_N + j < N:
                    C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] + \
                        B[by * block_M + i, bx * block_N + j]
    return main


def elementwise_tiles(M, N, block_M=32, block_N=128, dtype="float16"):
    """Copies through fragments (vectorized), computes in registers: c = relu(a) * 2 + b."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a = T.alloc_fragment((block_M, block_N), dtype)
            b = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], a)
            T.copy(B[by * block_M, bx * block_N], b)
            for i, j in T.Parallel(block_M, block_N):
                a[i, j] = T.max(a[i, j], 0) * 2 + b[i, j]
            T.copy(a, C[by * block_M, bx * block_N])
    return main


def column_sum_shared(M, N, dtype="float32"):
    """reduce_sum over a shared tile, dim 0, plus reduce_max with clear=False, and cumsum."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), S: T.Tensor((N,), dtype), Mx: T.Tensor((N,), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, N), dtype)
            col = T.alloc_fragment((N,), dtype)
            mx = T.alloc_fragment((N,), dtype)
            T.copy(A, A_s)
            T.reduce_sum(A_s, col, dim=0)
            T.fill(mx, 0.5)
            T.reduce_max(A_s, mx, dim=0, clear=False)
            T.copy(col, S)
            T.copy(mx, Mx)
            T.cumsum(A_s, dim=0)
            T.copy(A_s, C)
    return main


def atomic_row_sums(M, N, block_M=16):
    """Each block adds its rows' sums into out[0:N] with T.atomic_add."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), "float32")
            part = T.alloc_fragment((N,), "float32")
            T.copy(A[bx * block_M, 0], tile)
            T.reduce_sum(tile, part, dim=0)
            T.atomic_add(Out, part)
    return main


def flashattn(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, num_stages=2, threads=128):
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


def assert_positive(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), limit: T.float32):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(N):
                T.device_assert(A[i] < limit, "A must stay below the limit")
    return main


def all_kernels():
    """name -> prim_func of every kernel above, in sizes small enough for compile-only checks."""
    return {
        "gemm_f16_tn": matmul(256, 256, 128, trans_B=True),
        "gemm_f16_nn": matmul(256, 256, 128),
        "gemm_f16_tt": matmul(256, 256, 128, trans_A=True, trans_B=True),
        "gemm_bf16": matmul(256, 256, 128, dtype="bfloat16", out_dtype="float32"),
        "gemm_tf32": matmul(256, 256, 128, 64, 64, 32, dtype="float32"),
        "gemm_int8": matmul(256, 256, 128, 64, 64, 64, dtype="int8", accum_dtype="int32", out_dtype="int32"),
        "gemm_f16_acc16": matmul(256, 256, 128, accum_dtype="float16"),
        "gemm_f64_simt": matmul(64, 64, 64, 32, 32, 16, dtype="float64", accum_dtype="float64", num_stages=2),
        "gemm_swizzle": matmul(512, 512, 128, swizzle_panel=2),
        "gemm_dynamic_m": matmul_dynamic_m(256, 128),
        "softmax": softmax(64, 512),
        "rms_norm": rms_norm(64, 512),
        "layer_norm": layer_norm(64, 256),
        "elementwise_add": elementwise_add(100, 300),
        "elementwise_tiles": elementwise_tiles(128, 256),
        "column_sum_shared": column_sum_shared(32, 64),
        "atomic_row_sums": atomic_row_sums(64, 128),
        "flash_causal": flashattn(1, 2, 256, 64, True),
        "flash_full": flashattn(1, 2, 256, 64, False),
        "flash_d128": flashattn(1, 2, 256, 128, False, block_M=64, block_N=64),
        "assert_positive": assert_positive(64),
    }


def rms_norm_rows(M, N, blk_m=1, dtype="float16", eps=1e-6):
    """RMSNorm with rows held in registers (no shared staging): the memory-bound benchmark form."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            x = T.alloc_fragment((blk_m, N), "float32")
            sq = T.alloc_fragment((blk_m, N), "float32")
            ss = T.alloc_fragment((blk_m,), "float32")
            T.copy(A[bx * blk_m, 0], x)
            for i, j in T.Parallel(blk_m, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i in T.Parallel(blk_m):
                ss[i] = T.rsqrt(ss[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                x[i, j] = x[i, j] * ss[i] * W[j]
            T.copy(x, B[bx * blk_m, 0])
    return main


def vector_add(M, N, block_M=8, block_N=512, dtype="float16"):
    """C = A + B through fragments (16-byte loads and stores)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a = T.alloc_fragment((block_M, block_N), dtype)
            b = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], a)
            T.copy(B[by * block_M, bx * block_N], b)
            for i, j in T.Parallel(block_M, block_N):
                a[i, j] = a[i, j] + b[i, j]
            T.copy(a, C[by * block_M, bx * block_N])
    return main


def elementwise_unguarded(M, N, block_M=32, block_N=128, dtype="float32"):
    """TileLang's element-wise idiom without explicit guards: the tails are guarded by the compiler."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * 2 + \
                    B[by * block_M + i, bx * block_N + j]
    return main
