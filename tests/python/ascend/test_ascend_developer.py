"""Developer mode on the ascend target: one kernel with T.gemm, T.Parallel, T.copy, fragments and
shared buffers, no scopes and no flags. Scope inference picks the memories, ascend_cv_split splits
the kernel into its cube and vector programs with GM workspaces between them, ascend_vid_reduction
gives each of the two vector cores half of the rows, ascend_cross_sync adds the cross-core flags and
ascend_insert_sync the intra-core ones. Every launch runs under the strict checker (races, flag
misuse, deadlocks, flags left set are errors), and every value is compared with numpy in float64."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import ResourceError, TileLangSyntaxError

CV = {"tl.ascend_auto_cv_combine": True, "tl.ascend_auto_cross_core_sync": True}


def compile_ascend(func, configs=None, target="ascend"):
    return tilelang._core.ascend.compile(func.ir, configs or {}, target)


def minicv(M, N, K, block_M, block_N, kernel="default", dtype="float16", accum="float32"):
    """gemm into a fragment, exp of it on the vector cores, both copied out (TileLang-Ascend's
    'minicv', written in Developer form)."""
    m_num, n_num = M // block_M, N // block_N
    if kernel == "default":
        launch = lambda: T.Kernel(m_num * n_num, is_npu=True)  # noqa: E731
    else:
        launch = lambda: T.Kernel(m_num * n_num, threads=kernel, is_npu=True)  # noqa: E731

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype),
             D: T.Tensor((M, N), accum)):
        with launch() as cid:
            bx = cid // n_num
            by = cid % n_num
            A_BUF = T.alloc_shared((block_M, K), dtype)
            B_BUF = T.alloc_shared((K, block_N), dtype)
            C_BUF = T.alloc_fragment((block_M, block_N), accum)
            D_BUF = T.alloc_fragment((block_M, block_N), accum)
            T.copy(A[bx * block_M, 0], A_BUF)
            T.copy(B[0, by * block_N], B_BUF)
            T.gemm(A_BUF, B_BUF, C_BUF, initC=True)
            T.exp(C_BUF, D_BUF)
            T.copy(C_BUF, C[bx * block_M, by * block_N])
            T.copy(D_BUF, D[bx * block_M, by * block_N])
    return main


def inputs(rng, *shapes, scale=1.0, dtype=np.float16):
    return [(rng.standard_normal(s) * scale).astype(dtype) for s in shapes]


def f64(x):
    return x.astype(np.float64)


def check_minicv(k, M, N, K, seed):
    rng = np.random.default_rng(seed)
    a, b = inputs(rng, (M, K), (K, N), scale=0.25)
    c = np.zeros((M, N), np.float16)
    d = np.zeros((M, N), np.float32)
    k.launch([a, b, c, d])
    ref = f64(a) @ f64(b)
    np.testing.assert_allclose(f64(c), ref, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(f64(d), np.exp(ref), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kernel", ["default", 1, 2])
def test_minicv_npuir_matches_numpy(kernel):
    M, N, K = 256, 512, 64
    # One vector core cannot hold two 128 x 256 fp32 tiles (256 KiB > 192 KiB of UB).
    bn = 128 if kernel == 1 else 256
    k = compile_ascend(minicv(M, N, K, 128, bn, kernel), target="npuir")
    src = k.source
    assert f"alloc C_BUF: L0C float32[128, {bn}]" in src     # gemm C -> L0C (exactly full for 256)
    assert "cv_ws0_C_BUF" in src                              # the L0C -> UB transfer goes through GM
    assert "set_cross_flag" in src and "wait_cross_flag" in src
    rows = 128 if kernel == 1 else 64                         # vid reduction halves the UB tiles
    assert f"alloc D_BUF: UB float32[{rows}, {bn}]" in src
    check_minicv(k, M, N, K, seed=150 + (kernel if isinstance(kernel, int) else 0))
    info = k.info()
    assert info["cv_workspaces"] == 1 and info["cross_syncs_inserted"] == 2  # one hand-off, no loop
    assert info["workspace_bytes_per_core_group"] == 128 * bn * 4
    blocks = (M // 128) * (N // bn)
    assert info["blocks"] == blocks
    assert info["vector_cores"] == blocks * (1 if kernel == 1 else 2)


def test_minicv_threads_1_full_tile_overflows_ub():
    with pytest.raises(ResourceError) as e:
        compile_ascend(minicv(256, 512, 64, 128, 256, 1), target="npuir")
    msg = str(e.value)
    assert "UB over capacity" in msg and "'C_BUF_ub' float32[128, 256] = 131072 bytes" in msg and "'D_BUF'" in msg


def test_minicv_with_pass_configs_on_target_ascend():
    M, N, K = 128, 256, 128
    k = compile_ascend(minicv(M, N, K, 64, 128), CV | {"tl.ascend_auto_sync": True})
    check_minicv(k, M, N, K, seed=151)


def test_minicv_without_cv_combine_names_the_ambiguous_buffer():
    with pytest.raises(TileLangSyntaxError) as e:
        compile_ascend(minicv(128, 256, 64, 64, 128))
    msg = str(e.value)
    assert "'C_BUF'" in msg and "ambiguous" in msg and "TL_ASCEND_AUTO_CV_COMBINE" in msg and "npuir" in msg
    assert "T.gemm" in msg and "tile.exp" in msg


def test_cv_sync_without_cv_combine_is_an_error():
    with pytest.raises(ValueError, match="requires TL_ASCEND_AUTO_CV_COMBINE"):
        compile_ascend(minicv(128, 256, 64, 64, 128), {"tl.ascend_auto_cross_core_sync": True})


def test_vector_only_fragment_is_ub_without_cv_combine():
    """A fragment that only vector work touches is UB (it used to default to L0C)."""
    M, N = 64, 128

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1, is_npu=True) as cid:
            x = T.alloc_fragment((M, N), "float32")
            y = T.alloc_fragment((M, N), "float32")
            T.copy(X[0, 0], x)
            T.exp(x, y)
            T.copy(y, Y[0, 0])
    k = compile_ascend(main, {"tl.ascend_auto_sync": True})
    assert "alloc y: UB float32[64, 128]" in k.source
    x = np.random.default_rng(3).standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    k.launch([x, y])
    np.testing.assert_allclose(f64(y), np.exp(f64(x)), rtol=1e-5)


def gemm_epilogue_loop(M, N, K, block_M, block_N, block_K, threads=2, stages=0, interval=1):
    """Per K step: S = A_k @ B_k on the cube, acc += exp(S) on the vector cores: an L0C -> UB transfer
    inside a loop (cross-core flags at the loop, workspace reuse guarded by the back flag)."""
    m_num, n_num = M // block_M, N // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(m_num * n_num, threads=threads, is_npu=True) as cid:
            bx = cid // n_num
            by = cid % n_num
            a_s = T.alloc_shared((block_M, block_K), "float16")
            b_s = T.alloc_shared((block_K, block_N), "float16")
            s_f = T.alloc_fragment((block_M, block_N), "float32")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.fill(acc, 0)
            for k in (T.Pipelined(K // block_K, num_stages=stages, cross_interval=interval) if stages
                      else T.serial(K // block_K)):
                T.copy(A[bx * block_M, k * block_K], a_s)
                T.copy(B[k * block_K, by * block_N], b_s)
                T.gemm(a_s, b_s, s_f, initC=True)
                for i, j in T.Parallel(block_M, block_N):
                    acc[i, j] = acc[i, j] + T.exp(s_f[i, j])
            T.copy(acc, O[bx * block_M, by * block_N])
    return main


@pytest.mark.parametrize("threads", [1, 2])
def test_transfer_inside_a_loop(threads):
    M, N, K = 128, 128, 256
    k = compile_ascend(gemm_epilogue_loop(M, N, K, 64, 128, 64, threads), target="npuir")
    rng = np.random.default_rng(152)
    a, b = inputs(rng, (M, K), (K, N), scale=0.2)
    o = np.zeros((M, N), np.float32)
    k.launch([a, b, o])
    ref = sum(np.exp(f64(a[:, s:s + 64]) @ f64(b[s:s + 64])) for s in range(0, K, 64))
    np.testing.assert_allclose(f64(o), ref, rtol=1e-4, atol=1e-4)
    assert k.info()["blocks"] == 2


def vector_then_cube(M, N, K, block_M, threads=2):
    """P = exp(X) on the vector cores feeds T.gemm on the cube: a UB -> L1 transfer."""
    @T.prim_func
    def main(X: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M // block_M, threads=threads, is_npu=True) as cid:
            x_s = T.alloc_shared((block_M, K), "float16")
            p_s = T.alloc_shared((block_M, K), "float16")
            b_s = T.alloc_shared((K, N), "float16")
            c_f = T.alloc_fragment((block_M, N), "float32")
            T.copy(X[cid * block_M, 0], x_s)
            T.copy(B[0, 0], b_s)
            for i, j in T.Parallel(block_M, K):
                p_s[i, j] = T.exp(x_s[i, j])
            T.gemm(p_s, b_s, c_f, initC=True)
            T.copy(c_f, C[cid * block_M, 0])
    return main


@pytest.mark.parametrize("threads", [1, 2])
def test_vector_result_feeds_the_cube(threads):
    M, N, K = 128, 128, 64
    k = compile_ascend(vector_then_cube(M, N, K, 64, threads), target="npuir")
    src = k.source
    assert "alloc p_s: L1" in src and "alloc p_s_ub: UB" in src
    rng = np.random.default_rng(153)
    x, b = inputs(rng, (M, K), (K, N), scale=0.5)
    c = np.zeros((M, N), np.float32)
    k.launch([x, b, c])
    p = np.exp(f64(x)).astype(np.float16)
    np.testing.assert_allclose(f64(c), f64(p) @ f64(b), rtol=2e-3, atol=2e-3)


def test_vector_result_into_gemm_accumulator_is_split():
    """A vector result cannot become an L0C accumulator; the split gives the accumulating gemm a fresh
    one and the vector core adds it (tests/python/ascend/test_ascend_cv_accumulate.py has more)."""
    M = N = K = 64

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1, is_npu=True) as cid:
            a_s = T.alloc_shared((M, K), "float16")
            b_s = T.alloc_shared((K, N), "float16")
            c_f = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], a_s)
            T.copy(B[0, 0], b_s)
            T.gemm(a_s, b_s, c_f, initC=True)
            for i, j in T.Parallel(M, N):
                c_f[i, j] = c_f[i, j] * 2.0
            T.gemm(a_s, b_s, c_f)  # marker: accumulate-after-vector
            T.copy(c_f, C[0, 0])
    k = compile_ascend(main, target="npuir")
    assert "c_f_part" in k.source and "cv_ws" in k.source
    rng = np.random.default_rng(206)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k.launch([a, b, c])
    np.testing.assert_allclose(c, 3.0 * (a.astype(np.float64) @ b.astype(np.float64)), rtol=1e-4, atol=1e-3)


def test_gemm_operand_fragment_used_by_vector_fails_closed():
    M = N = K = 64

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1, is_npu=True) as cid:
            a_s = T.alloc_shared((M, K), "float16")
            a_l0 = T.alloc_L0A((M, K), "float16")
            b_s = T.alloc_shared((K, N), "float16")
            b_l0 = T.alloc_L0B((K, N), "float16")
            c_f = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], a_s)
            T.copy(B[0, 0], b_s)
            T.copy(a_s, a_l0)
            T.copy(b_s, b_l0)
            T.tile.exp(a_l0, a_l0)
            T.gemm(a_l0, b_l0, c_f, initC=True)
            T.copy(c_f, C[0, 0])
    with pytest.raises(TileLangSyntaxError, match=r"'a_l0' is in L0A"):
        compile_ascend(main, target="npuir")


def run_epilogue_loop(stages, threads=2, interval=1, K=512):
    M, N = 128, 128
    k = compile_ascend(gemm_epilogue_loop(M, N, K, 64, 128, 64, threads, stages, interval), target="npuir")
    rng = np.random.default_rng(154)
    a, b = inputs(rng, (M, K), (K, N), scale=0.2)
    o = np.zeros((M, N), np.float32)
    k.launch([a, b, o])
    ref = sum(np.exp(f64(a[:, s:s + 64]) @ f64(b[s:s + 64])) for s in range(0, K, 64))
    np.testing.assert_allclose(f64(o), ref, rtol=1e-4, atol=1e-4)
    return k


@pytest.mark.parametrize("threads", [1, 2])
def test_cv_pipelining_runs_the_cube_ahead(threads):
    """T.Pipelined(num_stages=k) over a loop with cube and vector work: the GM workspace gets k
    versions and k pre-armed back flags, so the cube runs up to k steps ahead of the vector cores."""
    serial = run_epilogue_loop(0, threads)
    piped = run_epilogue_loop(3, threads)
    assert "cv_ws0_s_f: global float32[3, 64, 128]" in piped.source or "float32[3, 64, 128]" in piped.source
    assert piped.info()["cycles"] < serial.info()["cycles"]


PASS_CONFIGS = {
    tilelang.PassConfigKey.TL_ASCEND_AUTO_CV_COMBINE: True,
    tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC: True,
    tilelang.PassConfigKey.TL_ASCEND_MEMORY_PLANNING: True,
    tilelang.PassConfigKey.TL_ASCEND_AUTO_CV_SYNC: True,
}


def test_tilelang_ascend_matmul_add_developer():
    """TileLang-Ascend's examples/developer_mode/matmul_add_developer.py (torch_npu replaced by
    numpy): threads=2, full-tile UB buffers, an explicit T.copy(C_L0, c_ub) L0C -> UB."""
    @tilelang.jit(out_idx=[2], pass_configs=PASS_CONFIGS, target="ascend")
    def matmul_add(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"):
        m_num = M // block_M
        n_num = N // block_N

        @T.prim_func
        def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype),
                 D: T.Tensor((M, N), dtype)):
            with T.Kernel(m_num * n_num, threads=2, is_npu=True) as (cid):
                bx = cid // n_num
                by = cid % n_num
                A_L1 = T.alloc_shared((block_M, block_K), dtype)
                B_L1 = T.alloc_shared((block_K, block_N), dtype)
                C_L0 = T.alloc_fragment((block_M, block_N), accum_dtype)
                d_ub = T.alloc_shared((block_M, block_N), dtype)
                c_ub = T.alloc_shared((block_M, block_N), dtype)
                loop_k = T.ceildiv(K, block_K)
                for k in T.serial(loop_k):
                    T.copy(A[bx * block_M, k * block_K], A_L1)
                    T.copy(B[k * block_K, by * block_N], B_L1)
                    if k == 0:
                        T.gemm_v0(A_L1, B_L1, C_L0, init=True)
                    else:
                        T.gemm_v0(A_L1, B_L1, C_L0)
                T.copy(C_L0, c_ub)
                T.copy(D[bx * block_M, by * block_N], d_ub)
                T.tile.add(c_ub, c_ub, d_ub)
                T.copy(c_ub, C[bx * block_M, by * block_N])
        return main

    M = N = 256
    K = 256
    func = matmul_add(M, N, K, 128, 256, 64)
    rng = np.random.default_rng(155)
    a, b, d = inputs(rng, (M, K), (K, N), (M, N), scale=0.5)
    c = func(a, b, d)
    ref = f64(a) @ f64(b) + f64(d)
    np.testing.assert_allclose(f64(c), ref, rtol=1e-2, atol=1e-2)
    assert "cv_ws0_C_L0" in func.get_kernel_source()


def test_tilelang_ascend_gemm_developer():
    """TileLang-Ascend's examples/developer_mode/gemm_developer.py: `as (cid, _)`, no vector work."""
    @tilelang.jit(out_idx=[-1], pass_configs=PASS_CONFIGS, target="ascend")
    def matmul(M, N, K, block_M, block_N, K_L1, dtype="float16", accum_dtype="float"):
        m_num = M // block_M
        n_num = N // block_N

        @T.prim_func
        def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(m_num * n_num, is_npu=True) as (cid, _):
                bx = cid // n_num
                by = cid % n_num
                A_L1 = T.alloc_shared((block_M, K_L1), dtype)
                B_L1 = T.alloc_shared((K_L1, block_N), dtype)
                C_L0 = T.alloc_fragment((block_M, block_N), accum_dtype)
                loop_k = T.ceildiv(K, K_L1)
                for k in T.serial(loop_k):
                    T.copy(A[bx * block_M, k * K_L1], A_L1)
                    T.copy(B[k * K_L1, by * block_N], B_L1)
                    T.gemm_v0(A_L1, B_L1, C_L0, init=(k == 0))
                T.copy(C_L0, C[bx * block_M, by * block_N])
        return main

    M = N = K = 256
    func = matmul(M, N, K, 128, 256, 64)
    rng = np.random.default_rng(156)
    a, b = inputs(rng, (M, K), (K, N))
    c = func(a, b)
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=1e-2, atol=1e-1)


def test_tilelang_ascend_flash_attn_bshd_developer():
    """TileLang-Ascend's examples/developer_mode/flash_attn_bshd_developer.py (torch_npu replaced by
    numpy, S = 128): threads=2, explicit L0C -> UB and UB -> L1 copies, per-row T.tile loops over
    `range(block_M)` that vid reduction halves, T.Pipelined(num_stages=2) over cube and vector work."""
    B, S, H, D = 1, 128, 1, 128

    @tilelang.jit(out_idx=[3], pass_configs=PASS_CONFIGS, target="ascend")
    def flash_attention_fwd(heads, dim):
        block_M, block_N = 32, 64
        batch, seq_len = B, S
        dtype, accum_dtype = "float16", "float"
        sm_scale = (1.0 / dim) ** 0.5
        shape = [batch, heads, seq_len, dim]
        block_num = seq_len // block_M * heads * batch

        @T.prim_func
        def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
                 Output: T.Tensor(shape, dtype)):
            with T.Kernel(block_num, threads=2, is_npu=True) as (cid):
                bx = cid % (seq_len // block_M)
                by = cid // (seq_len // block_M) % heads
                bz = cid // (seq_len // block_M) // heads % batch
                q_l1 = T.alloc_shared([block_M, dim], dtype)
                k_l1 = T.alloc_shared([block_N, dim], dtype)
                v_l1 = T.alloc_shared([block_N, dim], dtype)
                acc_s_l1 = T.alloc_shared([block_M, block_N], dtype)
                acc_s_l0c = T.alloc_fragment([block_M, block_N], accum_dtype)
                acc_o_l0c = T.alloc_fragment([block_M, dim], accum_dtype)
                acc_o = T.alloc_shared([block_M, dim], accum_dtype)
                sumexp = T.alloc_shared([block_M], accum_dtype)
                m_i = T.alloc_shared([block_M], accum_dtype)
                acc_s_ub = T.alloc_shared([block_M, block_N], accum_dtype)
                m_i_prev = T.alloc_shared([block_M], accum_dtype)
                acc_s_ub_ = T.alloc_shared([block_M, block_N], accum_dtype)
                sumexp_i_ub = T.alloc_shared([block_M], accum_dtype)
                acc_s_half = T.alloc_shared([block_M, block_N], dtype)
                acc_o_ub = T.alloc_shared([block_M, dim], accum_dtype)
                acc_o_half = T.alloc_shared([block_M, dim], dtype)

                T.tile.fill(acc_o, 0.0)
                T.tile.fill(sumexp, 0.0)
                T.tile.fill(m_i, -(2**30))
                T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], q_l1)

                for k in T.Pipelined(T.ceildiv(seq_len, block_N), num_stages=2):
                    T.copy(K[bz, by, k * block_N:(k + 1) * block_N, :], k_l1)
                    T.gemm_v0(q_l1, k_l1, acc_s_l0c, transpose_B=True, init=True)
                    T.copy(acc_s_l0c, acc_s_ub_)
                    T.tile.fill(acc_s_ub, 0.0)
                    T.copy(m_i, m_i_prev)
                    T.tile.add(acc_s_ub, acc_s_ub, acc_s_ub_)
                    T.tile.mul(acc_s_ub, acc_s_ub, sm_scale)
                    T.reduce_max(acc_s_ub, m_i, dim=-1)
                    T.tile.max(m_i, m_i, m_i_prev)
                    T.tile.sub(m_i_prev, m_i_prev, m_i)
                    T.tile.exp(m_i_prev, m_i_prev)
                    for h_i in range(block_M):
                        T.tile.sub(acc_s_ub[h_i, :], acc_s_ub[h_i, :], m_i[h_i])
                    T.tile.exp(acc_s_ub, acc_s_ub)
                    T.reduce_sum(acc_s_ub, sumexp_i_ub, dim=-1)
                    T.tile.mul(sumexp, sumexp, m_i_prev)
                    T.tile.add(sumexp, sumexp, sumexp_i_ub)
                    T.copy(acc_s_ub, acc_s_half)
                    T.copy(acc_s_half, acc_s_l1)
                    T.copy(V[bz, by, k * block_N:(k + 1) * block_N, :], v_l1)
                    T.gemm_v0(acc_s_l1, v_l1, acc_o_l0c, init=True)
                    T.copy(acc_o_l0c, acc_o_ub)
                    for h_i in range(block_M):
                        T.tile.mul(acc_o[h_i, :], acc_o[h_i, :], m_i_prev[h_i])
                    T.tile.add(acc_o, acc_o, acc_o_ub)
                for h_i in range(block_M):
                    T.tile.div(acc_o[h_i, :], acc_o[h_i, :], sumexp[h_i])
                T.copy(acc_o, acc_o_half)
                T.copy(acc_o_half, Output[bz, by, bx * block_M:bx * block_M + block_M, :])
        return main

    func = flash_attention_fwd(heads=H, dim=D)
    rng = np.random.default_rng(157)
    q, k, v = inputs(rng, (B, H, S, D), (B, H, S, D), (B, H, S, D))
    o = func(q, k, v)
    s = np.einsum("bhsd,bhkd->bhsk", f64(q), f64(k)) * (1.0 / D) ** 0.5
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ref = np.einsum("bhsk,bhkd->bhsd", p / p.sum(axis=-1, keepdims=True), f64(v))
    np.testing.assert_allclose(f64(o), ref, rtol=2e-2, atol=2e-3)


def test_gm_tile_for_both_cores_is_loaded_twice():
    """A shared tile loaded from GM feeds T.gemm (so it lives in L1) and is also read by vector work:
    L1 has no path to UB, so the split loads it from GM into both L1 and its UB twin."""
    M = N = K = 64

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32"),
             D: T.Tensor((M, K), "float16")):
        with T.Kernel(1, is_npu=True) as cid:
            a_s = T.alloc_shared((M, K), "float16")
            b_s = T.alloc_shared((K, N), "float16")
            d_s = T.alloc_shared((M, K), "float16")
            c_f = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], a_s)
            T.copy(B[0, 0], b_s)
            T.gemm(a_s, b_s, c_f, initC=True)
            for i, j in T.Parallel(M, K):
                d_s[i, j] = a_s[i, j] * 2.0
            T.copy(c_f, C[0, 0])
            T.copy(d_s, D[0, 0])
    k = compile_ascend(main, target="npuir")
    src = k.source
    assert "alloc a_s: L1" in src and "alloc a_s_ub: UB float16[32, 64]" in src
    assert "cv_ws" not in src  # no transfer: both versions come from GM
    rng = np.random.default_rng(161)
    a, b = inputs(rng, (M, K), (K, N))
    c = np.zeros((M, N), np.float32)
    d = np.zeros((M, K), np.float16)
    k.launch([a, b, c, d])
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(f64(d), 2 * f64(a), rtol=1e-3)


def test_minicv_more_blocks_than_core_groups_reuses_workspaces():
    """32 blocks on 24 core groups: the second wave reuses its group's GM workspace (the checker
    forgets a group's workspace accesses when its next block starts; races inside a block are
    still checked)."""
    M, N, K = 512, 512, 64
    k = compile_ascend(minicv(M, N, K, 64, 128), target="npuir")
    check_minicv(k, M, N, K, seed=158)
    assert k.info()["blocks"] == 32


def test_minicv_fp16_fragments_as_cid_subid():
    """The seed's spelling: fp16 fragments for the gemm result and its exp, `as (cid, subid)` with
    subid unused (the compiler splits the rows between the vector cores)."""
    M, N, K = 128, 256, 64

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16"),
             D: T.Tensor((M, N), "float16")):
        with T.Kernel(2, is_npu=True) as (cid, subid):
            A_BUF = T.alloc_shared((64, K), "float16")
            B_BUF = T.alloc_shared((K, N), "float16")
            C_BUF = T.alloc_fragment((64, N), "float16")
            D_BUF = T.alloc_fragment((64, N), "float16")
            T.copy(A[cid * 64, 0], A_BUF)
            T.copy(B[0, 0], B_BUF)
            T.gemm(A_BUF, B_BUF, C_BUF, initC=True)
            T.exp(C_BUF, D_BUF)
            T.copy(C_BUF, C[cid * 64, 0])
            T.copy(D_BUF, D[cid * 64, 0])
    k = compile_ascend(main, target="npuir")
    assert "alloc D_BUF: UB float16[32, 256]" in k.source
    rng = np.random.default_rng(159)
    a, b = inputs(rng, (M, K), (K, N), scale=0.25)
    c = np.zeros((M, N), np.float16)
    d = np.zeros((M, N), np.float16)
    k.launch([a, b, c, d])
    ref = f64(a) @ f64(b)
    np.testing.assert_allclose(f64(c), ref, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(f64(d), np.exp(f64(c)), rtol=2e-3, atol=2e-3)


def test_tilelang_ascend_gelu_mul_developer():
    """TileLang-Ascend's examples/developer_mode/gelu_mul_developer.py (torch replaced by numpy):
    vector-only Developer kernel, threads=2, scalar tile operands."""
    @tilelang.jit(out_idx=[1], pass_configs={tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC: True,
                                             tilelang.PassConfigKey.TL_ASCEND_AUTO_CV_COMBINE: True},
                  target="ascend")
    def gelu_mul(M, N, block_M, block_N, dtype="float"):
        m_num = T.ceildiv(M, block_M)
        n_num = T.ceildiv(N // 2, block_N)

        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N // 2), dtype)):
            with T.Kernel(m_num * n_num, threads=2, is_npu=True) as (cid):
                bx = cid // n_num
                by = cid % n_num
                a1_ub = T.alloc_shared((block_M, block_N), dtype)
                a2_ub = T.alloc_shared((block_M, block_N), dtype)
                b_ub = T.alloc_shared((block_M, block_N), dtype)
                temp_ub = T.alloc_shared((block_M, block_N), dtype)
                T.copy(A[bx * block_M, by * block_N], a1_ub)
                T.copy(A[bx * block_M, by * block_N + N // 2], a2_ub)
                T.tile.mul(temp_ub, a1_ub, a1_ub)
                T.tile.mul(temp_ub, a1_ub, temp_ub)
                T.tile.mul(temp_ub, temp_ub, 0.044715)
                T.tile.add(temp_ub, a1_ub, temp_ub)
                T.tile.mul(temp_ub, temp_ub, -1.5957691)
                T.tile.exp(temp_ub, temp_ub)
                T.tile.add(temp_ub, temp_ub, 1.0)
                T.tile.div(temp_ub, a1_ub, temp_ub)
                T.tile.mul(b_ub, temp_ub, a2_ub)
                T.copy(b_ub, B[bx * block_M, by * block_N])
        return main

    for M, N, block_M, block_N in [(256, 256, 64, 64), (256, 512, 128, 128)]:
        func = gelu_mul(M, N, block_M, block_N)
        a = np.random.default_rng(160).standard_normal((M, N)).astype(np.float32)
        b = func(a)
        x1, x2 = f64(a[:, :N // 2]), f64(a[:, N // 2:])
        gelu = 0.5 * x1 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x1 + 0.044715 * x1 ** 3)))
        np.testing.assert_allclose(f64(b), gelu * x2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("K", [512, 448])  # 8 steps, and 7 (a partial last group)
def test_cross_interval_sets_and_waits_once_per_group(K):
    every = run_epilogue_loop(4, K=K)
    grouped = run_epilogue_loop(4, interval=2, K=K)
    src = grouped.source
    assert "floormod(k, 2) == 1" in src  # the set at the end of each group of 2 (or the last step)
    # 2 per hand-off + 2 per pre-armed back flag: 4 stages / 2 per group = 2 pre-arms
    assert grouped.info()["cross_syncs_inserted"] == 2 + 2 + 2 * 2
    assert every.info()["cross_syncs_inserted"] == 2 + 2 + 2 * 4
