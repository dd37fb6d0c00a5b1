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
    assert len(res) == 2 and all(set(r) == {"allgather_gemm", "allgather_gemm_ce", "gemm_reduce_scatter", "allreduce"}
                                 for r in res)


def test_allreduce_four_ranks():
    assert len(tld.launch(P.allreduce_only, 4, device="cpu")) == 4


def test_allgather_gemm_three_ranks_fp32():
    assert len(tld.launch(P.allgather_gemm_only, 3, device="cpu")) == 3


def test_allgather_gemm_copy_engine_three_and_four_ranks_fp32():
    """CopyEngineAllGather (a helper thread per rank copies the peers' rows and sets each chunk's
    flag) under the GEMM that waits per chunk: new random rows every call, values against float64."""
    assert len(tld.launch(P.allgather_gemm_ce_only, 3, device="cpu")) == 3
    assert len(tld.launch(P.allgather_gemm_ce_only, 4, 2, device="cpu")) == 4


def test_copy_engine_cuda_side_stream_plan():
    """The addresses and order of the cuda copies and flag writes (no GPU needed)."""
    assert tld.launch(P.copy_engine_side_ops, 3, device="cpu") == [True] * 3


def test_error_copy_engine_misuse():
    for msgs in tld.launch(P.err_copy_engine_misuse, 2, device="cpu"):
        assert len(msgs) == 4, msgs
        assert "not in symmetric memory" in msgs[0], msgs
        assert "multiple of world * chunks_per_rank" in msgs[1], msgs
        assert "finish without start" in msgs[2], msgs
        assert "has not been finished" in msgs[3], msgs


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


# ---- the copy-engine all-gather GEMM on sm_90a (NVRTC; no GPU needed) ---------------------------

def _cuda_util():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cuda"))
    import cuda_util
    if not cuda_util.has_nvrtc():
        pytest.skip("NVRTC not available")
    return cuda_util


def _producer_and_consumers(src):
    """(producer part, consumer part) of a warp-specialized kernel's source."""
    cons, prod = src.split("tl::setmaxnreg_inc")[1].split("tl::setmaxnreg_dec")
    return prod, cons


def test_copy_engine_gemm_is_the_plain_persistent_gemm_with_a_producer_wait():
    """allgather_gemm_ce lowers like the plain GEMM (warp-specialized, TMA, persistent) and its T.wait
    runs in the TMA producer thread alone, per tile, before the tile's loads; the consumers never wait."""
    cu = _cuda_util()
    from kernels import allgather_gemm_ce
    b = cu.build(allgather_gemm_ce(512, 512, 256, 2, 2, 128, 256, 64, num_stages=4, threads=256), "sm_90a")
    src, meta = b["source"], b["meta"]
    assert "persistent 1" in meta and "dist 1" in meta, meta
    prod, cons = _producer_and_consumers(src)
    assert "tl::dist::" not in cons.replace("tl::dist::rank()", ""), cons
    w = prod.index("tl::dist::wait<tl::dist::kThread>((&flags[")
    assert prod.index("for (int tile_iter") < w < prod.index("tl::tma_load"), prod
    assert src.count("tl::dist::wait") == 1


def test_copy_engine_wait_stays_block_wide_when_consumers_read_global():
    """A T.wait whose data the consumers read themselves (here: an addend from global memory in the
    epilogue) keeps the block-wide wait before the roles split and one CTA per tile; so do the fused
    kernels that push with remote copies and signals."""
    cu = _cuda_util()
    import ce_kernels as V
    from kernels import allgather_gemm
    for f in (V.gemm_wait_with_global_addend(512, 512, 256), allgather_gemm(256, 512, 256, 2, 128, 256, 64,
                                                                           num_stages=4, threads=256)):
        b = cu.build(f, "sm_90a")
        src = b["source"]
        assert "persistent 1" not in b["meta"], b["meta"]
        assert "tl::setmaxnreg_inc" in src  # still warp-specialized
        assert "kThread" not in src and src.index("tl::dist::wait(") < src.index("tl::setmaxnreg_inc"), src
