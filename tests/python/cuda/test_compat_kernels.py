"""Issue 12 item 6 on the cuda lowering, without a GPU: TileLang-style kernels from tests/compat
(attention backward, block-sparse attention) lowered for sm_80 and run on the cuda emulator against
numpy in float64, with no shared-memory race. Before the fixes the backward raised LayoutError
(`T.atomic_add(dQ[..], dq[i, j])` in T.Parallel) and block-sparse attention raised SyncError
(`if block_mask[k]` around shared-memory work)."""
import os
import sys

import numpy as np
import pytest

from cuda_util import EmuRunner, build

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "compat"))
import attention_kernels as AK  # noqa: E402

rng = np.random.default_rng(12)


def softmax_attention(q, k, v, causal, mask=None):
    s = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
    n = q.shape[2]
    if causal:
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", p, v), p


def emulate(func, *args):
    r = EmuRunner(func)
    out = r(*args)
    assert r.report["races"] == [], r.report["races"][:3]
    return out


@pytest.mark.parametrize("causal", [False, True])
def test_blocksparse_attention_on_emulator(causal):
    B, H, N, D, blk = 1, 1, 256, 64, 64
    nb = N // blk
    q, k, v = (rng.standard_normal((B, H, N, D)).astype(np.float16) for _ in range(3))
    scores = rng.standard_normal((B, H, nb, nb))
    scores[..., 0] = 100
    top2 = np.argsort(-scores, axis=-1)[..., :2]
    mask = np.zeros((B, H, nb, nb), bool)
    np.put_along_axis(mask, top2, True, axis=-1)
    mask = np.tril(mask)
    func = AK.blocksparse_attention.build(B, H, N, D, nb, causal)
    out = emulate(func, q, k, v, mask, np.zeros((B, H, N, D), np.float16))[4]
    full = np.kron(mask, np.ones((blk, blk))).astype(bool)
    ref, _ = softmax_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), causal, full)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=1e-2, atol=1e-2)


def test_attention_backward_dkdv_on_emulator():
    B, H, N, D = 1, 1, 128, 64
    q, k, v, do = (rng.standard_normal((B, H, N, D)).astype(np.float16) for _ in range(4))
    q64, k64, v64, do64 = (x.astype(np.float64) for x in (q, k, v, do))
    o, p = softmax_attention(q64, k64, v64, False)
    s = np.einsum("bhqd,bhkd->bhqk", q64, k64) / np.sqrt(D)
    lse = (np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)) * AK.LOG2E   # log2-sum-exp2 form
    delta = (o * do64).sum(-1)
    func = AK.bwd_dkdv.build(B, H, N, D, False)
    dq = np.zeros((B, H, N, D), np.float32)
    outs = emulate(func, q, k, v, do, lse.astype(np.float32), delta.astype(np.float32), dq,
                   np.zeros((B, H, N, D), np.float16), np.zeros((B, H, N, D), np.float16))
    dq_got, dk_got, dv_got = outs[6], outs[7], outs[8]
    dp = np.einsum("bhqd,bhkd->bhqk", do64, v64)
    ds = p * (dp - delta[..., None]) / np.sqrt(D)
    np.testing.assert_allclose(dv_got.astype(np.float64), np.einsum("bhqk,bhqd->bhkd", p, do64), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(dk_got.astype(np.float64), np.einsum("bhqk,bhqd->bhkd", ds, q64), rtol=2e-2, atol=2e-2)
    # dQ is stored through make_dq_layout; the postprocess kernel reads it back the same way.
    post = AK.bwd_postprocess.build(B, H, N, D)
    dq_out = emulate(post, dq_got, np.zeros((B, H, N, D), np.float16))[1]
    np.testing.assert_allclose(dq_out.astype(np.float64), np.einsum("bhqk,bhkd->bhqd", ds, k64), rtol=2e-2,
                               atol=2e-2)


# ---- the atomics TileLang programs use, lowered for cuda ----------------------------------------

def _atomics_kernel(M, N, block_M):
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((4, N), "float32"), Mx: T.Tensor((4, N), "float32"),
             Mn: T.Tensor((block_M, N), "float32"), I: T.Tensor((M,), "int32"), Imax: T.Tensor((1,), "int32"),
             Old: T.Tensor((M,), "int32"), Flag: T.Tensor((1,), "int32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            a = T.alloc_fragment((block_M, N), "float32")
            a_s = T.alloc_shared((block_M, N), "float32")
            T.copy(A[bx * block_M, 0], a)
            T.copy(A[bx * block_M, 0], a_s)
            for i, j in T.Parallel(block_M, N):
                T.atomic_add(S[(bx * block_M + i) % 4, j], a[i, j], memory_order="relaxed")
                T.atomic_max(Mx[(bx * block_M + i) % 4, j], a[i, j])
            T.atomic_min(Mn, a_s)
            for i in T.Parallel(block_M):
                Old[bx * block_M + i] = T.atomic_max(Imax[0], I[bx * block_M + i], return_prev=True)
            if T.atomic_load(Flag[0], memory_order="acquire") >= 0:
                T.atomic_store(Flag[0], bx + 1, memory_order="release")

    return main


def test_atomics_on_emulator():
    M, N, bm = 128, 16, 32
    A = rng.standard_normal((M, N)).astype(np.float32)
    I = rng.integers(-1000, 1000, M).astype(np.int32)
    outs = emulate(_atomics_kernel(M, N, bm), A, np.zeros((4, N), np.float32), np.full((4, N), -1e30, np.float32),
                   np.full((bm, N), 1e30, np.float32), I, np.array([-2**31], np.int32), np.zeros(M, np.int32),
                   np.zeros(1, np.int32))
    a = A.astype(np.float64)
    np.testing.assert_allclose(outs[1], np.stack([a[r::4].sum(0) for r in range(4)]), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(outs[2], np.stack([A[r::4].max(0) for r in range(4)]))
    np.testing.assert_array_equal(outs[3], A.reshape(-1, bm, N).min(0))
    assert outs[5][0] == I.max() and (outs[6] <= I.max()).all() and (outs[6] == -2**31).sum() == 1
    assert outs[7][0] == M // bm  # blocks run in order on the emulator


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_compat_kernels_compile_with_nvrtc(arch):
    from cuda_util import build, has_nvrtc
    if not has_nvrtc():
        pytest.skip("NVRTC not available")
    for func in (_atomics_kernel(128, 16, 32), AK.bwd_dkdv.build(1, 1, 128, 64, True),
                 AK.blocksparse_attention.build(1, 1, 256, 64, 4, True)):
        assert build(func, arch)["cubin"]


# ---- T.reshape / T.view lowered for cuda -----------------------------------------------------------

def _im2col_conv(N, L, KL, F, BN=8, BL=16):
    import tilelang.language as T

    @T.prim_func
    def conv(X: T.Tensor((N, L), "float16"), K: T.Tensor((KL, F), "float16"), O: T.Tensor((N, L, F), "float16")):
        with T.Kernel(N // BN, L // BL, threads=128) as (pn, pl):
            X_shared = T.alloc_shared((BN, BL, KL), "float16")
            K_shared = T.alloc_shared((KL, F), "float16")
            O_local = T.alloc_fragment((BN * BL, F), "float32")
            for i, j, k in T.Parallel(BN, BL, KL):
                X_shared[i, j, k] = T.if_then_else(pl * BL + j + k < L, X[pn * BN + i, pl * BL + j + k], 0)
            T.copy(K, K_shared)
            T.gemm(T.reshape(X_shared, (BN * BL, KL)), K_shared, O_local, clear_accum=True)
            T.copy(T.reshape(O_local, (BN, BL, F)), O[pn * BN, pl * BL, 0])  # a copy through a 3-D view

    @T.prim_func
    def scan(X: T.Tensor((N, L), "float16"), S: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as _:
            s = T.alloc_shared((N,), "float32")
            for i in T.Parallel(N):
                s[i] = T.cast(X[i, 0], "float32")
            T.cumsum(T.view(s, (1, N)), dim=1)
            T.copy(s, S)

    return conv, scan


def test_reshape_and_view_on_emulator():
    N, L, KL, F = 16, 32, 16, 32
    x = rng.standard_normal((N, L)).astype(np.float16)
    k = rng.standard_normal((KL, F)).astype(np.float16)
    conv, scan = _im2col_conv(N, L, KL, F)
    o = emulate(conv, x, k, np.zeros((N, L, F), np.float16)) + emulate(scan, x, np.zeros(N, np.float32))[1:]
    ref = np.zeros((N, L, F))
    for s in range(KL):
        ref[:, :L - s, :] += x[:, s:, None].astype(np.float64) * k[s].astype(np.float64)
    np.testing.assert_allclose(o[2].astype(np.float64), ref, rtol=1e-2, atol=2e-2)
    np.testing.assert_allclose(o[3], np.cumsum(x[:, 0].astype(np.float64)), rtol=1e-5, atol=1e-4)


# ---- several T.Kernel blocks in one function, with a T.alloc_global scratch tensor ----------------

def _split_sum(M, N, S):
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        partial = T.alloc_global((S, M), "float32")
        with T.Kernel(S, threads=128) as s:
            a = T.alloc_fragment((M, N // S), "float32")
            acc = T.alloc_fragment((M,), "float32")
            T.copy(A[0, s * (N // S)], a)
            T.reduce_sum(a, acc, dim=1)
            T.copy(acc, partial[s, 0])
        with T.Kernel(1, threads=128) as _:
            total = T.alloc_fragment((M,), "float32")
            T.clear(total)
            for s in T.serial(S):
                for i in T.Parallel(M):
                    total[i] += partial[s, i]
            T.copy(total, Out)

    return main


def test_split_kernels_with_alloc_global_on_emulator():
    M, N, S = 64, 256, 4
    A = rng.standard_normal((M, N)).astype(np.float32)
    func = _split_sum(M, N, S)
    out = emulate(func, A, np.zeros(M, np.float32), np.zeros((S, M), np.float32))
    np.testing.assert_allclose(out[1], A.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    from cuda_util import build, has_nvrtc
    if has_nvrtc():
        meta = build(func, "sm_80")["meta"]
        assert "then\nkernel main_kernel_1" in meta


# ---- reducers ----------------------------------------------------------------------------------------

def _reducer_kernels(M, N):
    import tilelang.language as T

    @T.prim_func
    def gemv(a: T.Tensor((M, N), "float16"), x: T.Tensor((N,), "float16"), o: T.Tensor((M,), "float16")):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as i0_m:
            o_reducer = T.alloc_reducer(64, "float32", replication="all")
            T.clear(o_reducer)
            for i0_n in T.Pipelined(T.ceildiv(N, 64), num_stages=2):
                a_smem = T.alloc_shared((64, 64), "float16")
                T.copy(a[i0_m * 64, i0_n * 64], a_smem)
                a_frag = T.alloc_fragment((64, 64), "float16")
                T.copy(a_smem, a_frag)
                x_frag = T.alloc_fragment(64, "float16")
                T.copy(x[i0_n * 64], x_frag)
                for i1_m, i1_n in T.Parallel(64, 64):
                    o_reducer[i1_m] += a_frag[i1_m, i1_n] * x_frag[i1_n]
            T.finalize_reducer(o_reducer)
            T.copy(o_reducer, o[i0_m * 64])

    @T.prim_func
    def v2(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as _:
            av = T.alloc_fragment((M, N), "float32")
            acc = T.alloc_reducer((M,), "float32", op="max")
            res = T.alloc_fragment((M,), "float32")
            T.copy(A, av)
            T.reducer_init(acc, 0.25)
            for i, j in T.Parallel(M, N):
                T.reducer_update(acc[i], av[i, j])
            T.finalize_reducer(acc, res)
            T.copy(res, Out)

    return gemv, v2


def test_reducers_on_emulator():
    M, N = 128, 256
    gemv, v2 = _reducer_kernels(M, N)
    a = rng.standard_normal((M, N)).astype(np.float16)
    x = rng.standard_normal(N).astype(np.float16)
    o = emulate(gemv, a, x, np.zeros(M, np.float16))[2]
    np.testing.assert_allclose(o.astype(np.float64), a.astype(np.float64) @ x.astype(np.float64), rtol=1e-2, atol=5e-2)
    A = rng.standard_normal((M, N)).astype(np.float32)
    out = emulate(v2, A, np.zeros(M, np.float32))[1]
    np.testing.assert_array_equal(out, np.maximum(A.max(1), 0.25))


def _gemm_rr(M, N, K, bm=64, bn=64, bk=32):
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_local = T.alloc_fragment((bm, bk), "float16")
            B_local = T.alloc_fragment((bk, bn), "float16")
            C_local = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_local)
            for k in T.serial(K // bk):
                T.copy(A[by * bm, k * bk], A_local)
                T.copy(B[k * bk, bx * bn], B_local)
                T.gemm(A_local, B_local, C_local)
            T.copy(C_local, C[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_gemm_with_both_operands_in_fragments_on_emulator(arch):
    """TileLang's matrix puzzle: A and B copied from global memory into fragments, then T.gemm
    (mma.sync with both operands in registers, tl::gemm_rr)."""
    M, N, K = 128, 64, 96
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    r = EmuRunner(_gemm_rr(M, N, K), arch=arch)
    out = r(a, b, np.zeros((M, N), np.float16))
    assert r.report["races"] == [], r.report["races"][:3]
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out[2].astype(np.float64), ref, rtol=2e-2, atol=5e-2)
    assert "tl::gemm_rr<" in build(_gemm_rr(M, N, K), arch)["source"]
