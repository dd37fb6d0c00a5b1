"""Thread-block clusters (T.Kernel(..., cluster_dims=c) / cta_cluster=c, T.ClusterKernel,
T.Scale("cta_cluster"), T.block_rank_in_cluster, T.cluster_sync; docs/TARGET_CUDA.md).

On sm_90a a warp-specialized GEMM in clusters of c CTAs along x multicasts the A tile the CTAs share:
each loads 1/c of its rows into all of them, and every CTA's consumers release each stage in all
of them. CI (no GPU) checks the lowering and NVRTC compiles it; a Hopper GPU checks the values
against numpy in float64 on random inputs (scripts/gpu_check.sh). On cpu a cluster only groups
block indices, so the same programs run there too."""
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

import cuda_kernels as K
from cuda_util import Runner, build, device_arch, has_gpu, requires_nvrtc

rng = np.random.default_rng(20)
requires_hopper = [pytest.mark.gpu,
                   pytest.mark.skipif(not has_gpu() or device_arch() != "sm_90a", reason="needs an sm_90 GPU")]


def _gemm_case(M, N, K_, np_dtype=np.float16, **kw):
    f = K.matmul(M, N, K_, **kw)
    A = rng.standard_normal((M, K_)).astype(np_dtype)
    B = rng.standard_normal((K_, N)).astype(np_dtype)
    out = np.float32 if kw.get("out_dtype") == "float32" else np_dtype
    C = np.full((M, N), np.nan, out)
    return f, (A, B, C), A.astype(np.float64) @ B.astype(np.float64)


def _check(C, ref, K_):
    err = np.abs(C.astype(np.float64) - ref).max() / np.abs(ref).max()
    assert err < 2e-2 * np.sqrt(K_ / 64), err


CASES = {
    # name: (M, N, K, dtype, builder kwargs)
    "c2": (512, 1024, 512, np.float16, dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=4,
                                            cluster=2)),
    "c2_swizzled": (768, 1024, 320, np.float16, dict(block_M=128, block_N=128, block_K=64, threads=256,
                                                     num_stages=3, swizzle_panel=2, cluster=2)),
    "c4_bf16_ragged_m": (328, 512, 256, ml_dtypes.bfloat16, dict(dtype="bfloat16", out_dtype="float32", block_M=128,
                                                                 block_N=128, block_K=64, threads=256, num_stages=3,
                                                                 cluster=4)),
}


@requires_nvrtc
@pytest.mark.parametrize("name", list(CASES))
def test_cluster_gemm_lowering(name):
    M, N, K_, dtype, kw = CASES[name]
    f, _, _ = _gemm_case(M, N, K_, dtype, **kw)
    r = build(f, "sm_90a")
    src = r["source"]
    c = kw["cluster"]
    assert f"__cluster_dims__({c}, 1, 1)" in src
    # A (shared by the CTAs of a cluster) is multicast, B (each CTA's own columns) is not.
    assert len(re.findall(r"tl::tma_load_multicast\(tl_tmap_\d+, \(&A_shared", src)) >= 1, src
    assert not re.search(r"tl::tma_load_multicast\(tl_tmap_\d+, \(&B_shared", src), src
    assert re.search(r"tl::tma_load\(tl_tmap_\d+, \(&B_shared", src), src
    # Every CTA's consumers release the stage in each CTA; cluster barriers after the set-up and at the end.
    assert f"tl::mbarrier_arrive_cluster_warps((&tl_mbar[" in src and f"]), {c});" in src
    assert f", {256 // 32 * c});" in src  # the empty barriers count one arrival per consumer warp and CTA
    assert src.count("tl::cluster_sync();") == 2
    for u in r["usage"]:
        assert u["spill_store_bytes"] == 0, u


@requires_nvrtc
def test_a_copy_that_depends_on_bx_is_not_multicast():
    """Clusters along x share only what does not depend on bx: a kernel whose A copy reads at bx
    keeps plain TMA loads (each CTA its own tile)."""
    M = N = K_ = 512

    @T.prim_func
    def main(A: T.Tensor((M, K_), "float16"), B: T.Tensor((K_, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(N // 128, M // 128, threads=256, cluster_dims=2) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K_ // 64, num_stages=3):
                T.copy(A[(by + bx) % (M // 128) * 128, k * 64], A_s)
                T.copy(B[k * 64, bx * 128], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 128, bx * 128])

    src = build(main, "sm_90a")["source"]
    assert "__cluster_dims__(2, 1, 1)" in src and "tma_load_multicast" not in src
    assert "mbarrier_arrive_cluster_warps" not in src


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("kind", ["cpu", pytest.param("gpu", marks=requires_hopper)])
def test_cluster_gemm_values(kind, name):
    M, N, K_, dtype, kw = CASES[name]
    f, args, ref = _gemm_case(M, N, K_, dtype, **kw)
    if kind == "gpu":
        (_, _, C) = Runner(f)(*args)
    else:
        tilelang.compile(f, target="cpu")(*args)
        C = args[2]
    _check(C, ref, K_)


def _ranks_kernel(c, gx=8, gy=3):
    @T.prim_func
    def main(R: T.Tensor((gy, gx, 2), "int32")):
        with T.Kernel(gx, gy, threads=128, cta_cluster=c) as (bx, by):
            with T.Scale("cta_cluster") as (rank, size):
                tx = T.get_thread_binding()
                if tx == 0:
                    R[by, bx, 0] = rank
                    R[by, bx, 1] = size
    return main


@pytest.mark.parametrize("kind", ["cpu", pytest.param("gpu", marks=requires_hopper)])
def test_scale_cta_cluster_binds_rank_and_size(kind):
    for c in (2, 4):
        R = np.full((3, 8, 2), -1, np.int32)
        f = _ranks_kernel(c)
        if kind == "gpu":
            (R,) = Runner(f)(R)
        else:
            tilelang.compile(f, target="cpu")(R)
        bx = np.arange(8)[None, :].repeat(3, 0)
        assert (R[..., 0] == bx % c).all() and (R[..., 1] == c).all(), R


@pytest.mark.parametrize("kind", [pytest.param("gpu", marks=requires_hopper)])
def test_cluster_sync_orders_global_writes_between_ctas(kind):
    """Each CTA writes its slot, T.cluster_sync(), then reads its neighbour's slot in the cluster."""
    n, c = 64, 2

    @T.prim_func
    def main(X: T.Tensor((n,), "int32"), S: T.Tensor((n,), "int32"), Y: T.Tensor((n,), "int32")):
        with T.ClusterKernel(n, cluster_dims=c, threads=32) as bx:
            tx = T.get_thread_binding()
            if tx == 0:
                S[bx] = X[bx] * 3 + 1
            T.cluster_sync()
            if tx == 0:
                r = T.block_rank_in_cluster()
                Y[bx] = S[bx - r + (r + 1) % c]

    X = rng.integers(-1000, 1000, n).astype(np.int32)
    (_, _, Y) = Runner(main)(X, np.zeros(n, np.int32), np.zeros(n, np.int32))
    b = np.arange(n)
    assert (Y == X[b - b % c + (b % c + 1) % c] * 3 + 1).all()


@requires_nvrtc
def test_cluster_kernel_compiles_without_warp_specialization():
    """A cluster kernel that is not warp-specialized (sm_90a with TL_DISABLE_WARP_SPECIALIZED) keeps
    its cluster shape and plain copies."""
    f = K.matmul(256, 512, 256, block_M=128, block_N=128, block_K=64, threads=256, num_stages=3, cluster=2)
    src = build(f, "sm_90a", {"tl.disable_warp_specialized": True})["source"]
    assert "__cluster_dims__(2, 1, 1)" in src and "tma_load" not in src
