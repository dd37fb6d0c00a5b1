"""tilelang.distributed and T.Scale("device") on cpu: one process per "device" over shared memory
(docs/DISTRIBUTED.md). Values are checked against torch; the gpu-marked tests run the same programs
with CUDA IPC (scripts/gpu_distributed.sh)."""
import os
import sys

import pytest

torch = pytest.importorskip("torch")  # torch.distributed bootstraps the ranks

import tilelang  # noqa: E402
import tilelang.distributed as tld  # noqa: E402
import tilelang.language as T  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import dist_programs as P  # noqa: E402


def test_fused_kernels_two_ranks():
    res = tld.launch(P.examples_all, 2, device="cpu")
    assert len(res) == 2 and all(set(r) == {"allgather_gemm", "gemm_reduce_scatter", "allreduce"} for r in res)


def test_allreduce_four_ranks():
    assert len(tld.launch(P.allreduce_only, 4, device="cpu")) == 4


def test_allgather_gemm_three_ranks_fp32():
    assert len(tld.launch(P.allgather_gemm_only, 3, device="cpu")) == 3


def test_tiles_put_get_signal_barrier():
    for fn in (P.tiles_put_get, P.ping_pong, P.barrier_rounds):
        assert tld.launch(fn, 2, device="cpu") == [True, True], fn.__name__


# ---- error tier -------------------------------------------------------------------------------

def test_error_buffer_not_symmetric():
    msgs = tld.launch(P.err_not_symmetric, 2, device="cpu")
    assert all("not in symmetric memory" in m and "tilelang.distributed.empty" in m for m in msgs), msgs
    assert all("dist_programs.py" in m for m in msgs), msgs  # points at the user's T.copy line


def test_error_mismatched_allocation():
    msgs = tld.launch(P.err_mismatched_alloc, 2, device="cpu")
    assert all("symmetric allocation mismatch" in m for m in msgs), msgs


def test_error_peer_missing_times_out():
    msgs = tld.launch(P.err_peer_missing, 2, device="cpu", timeout=2.0)
    assert "timed out" in msgs[0] and "T.barrier" in msgs[0], msgs


def test_error_peer_out_of_range():
    msgs = tld.launch(P.err_peer_out_of_range, 2, device="cpu")
    assert all("out of range" in m for m in msgs), msgs


def test_error_rank_failure_is_reported():
    with pytest.raises(tld.DistributedError, match="rank 1.*planted failure"):
        tld.launch(P.raise_on_rank_1, 2, device="cpu")


def test_error_not_initialised():
    k = tilelang.compile(P._shift_kernel(), target="cpu")
    with pytest.raises(RuntimeError, match="tilelang.distributed is not initialised"):
        k(torch.ones(256), torch.zeros(256))
    with pytest.raises(tld.DistributedError, match="not initialised"):
        tld.empty((4,))


def test_error_init_outside_a_job(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    import torch.distributed as dist
    if dist.is_initialized():
        pytest.fail("torch.distributed unexpectedly initialised in the test process")
    with pytest.raises(tld.DistributedError, match="launch.*torchrun"):
        tld.init(device="cpu")


def test_error_remote_copy_from_shared_buffer():
    with pytest.raises(NotImplementedError, match=r"test_distributed.py:\d+.*'S' is a shared buffer"):
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                with T.Scale("device") as rank, world:
                    S = T.alloc_shared((64,), "float32")
                    T.copy(A[0:64], S)
                    T.copy(S, A[0:64], dst=(rank + 1) % world)
        tilelang.compile(k, target="cpu")


def test_error_remote_copy_dtype_mismatch():
    with pytest.raises(TypeError, match="same dtype"):
        @T.prim_func
        def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float16")):
            with T.Kernel(1, threads=32) as bx:
                with T.Scale("device") as rank, world:
                    T.copy(A[0:64], B[0:64], dst=(rank + 1) % world)
        tilelang.compile(k, target="cpu")


def test_error_scale_unknown_level():
    # "cta_cluster" works (tests/python/cuda/test_clusters.py); other TileScale levels are not provided.
    with pytest.raises(ValueError, match="T.Scale takes \"device\" or \"cta_cluster\", got 'warp'"):
        T.Scale("warp")


def test_error_distributed_on_ascend():
    with pytest.raises(NotImplementedError, match="T.barrier is not implemented on Ascend"):
        @T.prim_func
        def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                T.barrier()
        tilelang.compile(k, target="ascend")


def test_copy_keyword_operands_still_work():
    """`T.copy(src=A, dst=B)` (keywords as operands, as TileLang programs write it) is a local copy."""
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.copy(src=A[0:64], dst=B[0:64])
    kern = tilelang.compile(k, target="cpu")
    a = torch.randn(64)
    b = torch.zeros(64)
    kern(a, b)
    assert torch.equal(a, b)


@pytest.mark.gpu
def test_fused_kernels_two_ranks_one_gpu():
    """Two processes sharing GPU 0 through CUDA IPC (the multi-GPU run is scripts/gpu_distributed.sh)."""
    res = tld.launch(P.examples_all, 2, device="cuda", share_gpu=True)
    assert len(res) == 2


@pytest.mark.gpu
def test_put_get_signal_barrier_cuda():
    for fn in (P.tiles_put_get, P.ping_pong, P.barrier_rounds):
        assert tld.launch(fn, 2, device="cuda", share_gpu=True) == [True, True], fn.__name__
