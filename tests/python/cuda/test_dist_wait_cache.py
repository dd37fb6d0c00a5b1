"""The copy-engine all-gather GEMM's producer waits on sm_90a (docs/DISTRIBUTED.md, "Overlap by the copy
engines"; src/target/cuda/ws_distributed.h, cache_producer_wait): in the persistent kernel the TMA
producer thread skips a T.wait(cmp="ge") for a flag element it has already seen satisfied with the same
or a higher value (TL_DISABLE_WAIT_CACHE turns that off), and the kernel keeps the plain GEMM's
TMA-store epilogue.

Run on the CPU emulator of lowered cuda IR (3 persistent CTAs, each looping over several tiles) as
rank 0 and rank 1 of two, against numpy in float64. The emulator runs one device: a T.wait whose flag
does not already compare true never completes (a RuntimeError naming the flag), which is how the
tests show that a cached wait still waits for a chunk it has not seen, or for a higher value."""
import os
import re
import sys

import numpy as np
import pytest

import cuda_util as cu
import tilelang.language as T

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "distributed"))
from kernels import allgather_gemm_ce  # noqa: E402

rng = np.random.default_rng(2020)
OFF = {"tl.disable_wait_cache": True}
# Small tiles for the emulator: 2 ranks x 256 rows, 64-row tiles (4 per chunk with one chunk per rank),
# two column tiles, a swizzle panel of 4 row tiles: 16 tiles over the emulator's 3 CTAs.
M_LOC, N, K, WORLD, BM, BN, BK, PANEL = 256, 128, 64, 2, 64, 64, 32, 4


def ce_kernel(chunks_per_rank=1):
    return allgather_gemm_ce(M_LOC, N, K, WORLD, chunks_per_rank, BM, BN, BK, num_stages=2, threads=128, panel=PANEL)


def gemm_wait_values(M, N, K, extra, cmp="ge"):
    """A persistent-form GEMM whose producer waits on flags[0] for epoch + (row tile % 2) * extra: the
    same flag element with a value that changes from tile to tile."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16"),
             flags: T.Tensor((2,), "uint32"), epoch: T.int32):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "float16")
            B_s = T.alloc_shared((BK, BN), "float16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.use_swizzle(panel_size=PANEL)
            T.wait(flags[0], epoch + (by % 2) * extra, cmp=cmp)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                T.copy(B[k * BK, bx * BN], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * BM, bx * BN])

    return main


def tile_rows(tiles_x, tiles_y, ctas=3):
    """Per persistent CTA, the row tile (by) of each tile it runs, in order: tile = cta + i * ctas, the
    row-major swizzle of T.use_swizzle(PANEL) (as the emulator's rasterize)."""
    out = []
    for c in range(ctas):
        rows = []
        for tile in range(c, tiles_x * tiles_y, ctas):
            group = PANEL * tiles_x
            first = tile // group * PANEL
            n = min(tiles_y - first, PANEL)
            rows.append(first + tile % group % n)
        out.append(rows)
    return out


def expected_polls(keys):
    """Waits that look at their flag when each CTA skips a key equal to the last one it passed."""
    return sum(sum(1 for i, k in enumerate(ks) if i == 0 or k != ks[i - 1]) for ks in keys)


def run(f, flags, epoch, configs=None, rank=0, world=1, M=M_LOC * WORLD):
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = np.zeros((M, N), np.float16)
    r = cu.EmuRunner(f, "sm_90a", configs, rank=rank, world=world)
    out = r(A, B, C, flags, epoch)
    assert r.report["races"] == [], r.report["races"]
    ref = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(out[2].astype(np.float64), ref, rtol=2e-3, atol=2e-2)
    return r.report


@pytest.mark.parametrize("rank", [0, 1])
@pytest.mark.parametrize("chunks_per_rank", [1, 2])
def test_cached_waits_values_and_polls(rank, chunks_per_rank):
    """Every chunk ready: C = A @ B on both ranks, with and without the cache; without it the producer
    polls once per tile, with it once per run of tiles in the same chunk (per CTA)."""
    epoch = 5
    flags = np.full((WORLD * chunks_per_rank,), epoch, np.uint32)
    flags[0] = epoch + 3  # ahead of the epoch: still "ge"
    tiles_loc = M_LOC // BM
    chunk_tiles = tiles_loc // chunks_per_rank
    rows = tile_rows(N // BN, M_LOC * WORLD // BM)
    chunks = [[(by + rank * tiles_loc) % (tiles_loc * WORLD) // chunk_tiles for by in r] for r in rows]
    n_tiles = sum(len(r) for r in rows)
    cached = run(ce_kernel(chunks_per_rank), flags, epoch, rank=rank, world=WORLD)
    plain = run(ce_kernel(chunks_per_rank), flags, epoch, OFF, rank=rank, world=WORLD)
    assert plain["dist_polls"] == n_tiles
    assert cached["dist_polls"] == expected_polls(chunks) < n_tiles, (cached, chunks)


@pytest.mark.parametrize("rank", [0, 1])
@pytest.mark.parametrize("configs", [None, OFF])
def test_cached_wait_still_waits_for_a_chunk_not_ready(rank, configs):
    """This rank's chunk is ready, the peer's not yet (its flag one epoch behind): every CTA has passed
    a wait for the own chunk before its first tile of the peer's, and that wait must still look at
    the peer's flag, so the kernel waits (on the emulator, which runs nothing that could set it:
    an error naming the flag)."""
    epoch = 9
    flags = np.full((WORLD,), epoch, np.uint32)
    peer = (rank + 1) % WORLD
    flags[peer] = epoch - 1
    with pytest.raises(RuntimeError, match=rf"never completes: flags\[{peer}\] is {epoch - 1}, waiting for >= {epoch}"):
        run(ce_kernel(), flags, epoch, configs, rank=rank, world=WORLD)


def test_cached_wait_polls_again_for_a_higher_value():
    """Same flag element, value epoch on even row tiles and epoch + 1 on odd ones: a wait for a value
    above the one seen polls again (with the flag at epoch + 1 the run completes; with the flag at
    epoch, the first odd tile waits even though the element was seen satisfied for epoch)."""
    M = M_LOC * WORLD
    f = gemm_wait_values(M, N, K, 1)
    rows = tile_rows(N // BN, M // BM)
    ok = np.array([6, 0], np.uint32)
    rep = run(f, ok, 5, M=M)
    assert rep["dist_polls"] == expected_record_polls(rows), rep
    with pytest.raises(RuntimeError, match=r"never completes: flags\[0\] is 5, waiting for >= 6"):
        run(f, np.array([5, 0], np.uint32), 5, M=M)
    assert run(f, ok, 5, OFF, M=M)["dist_polls"] == sum(len(r) for r in rows)


def expected_record_polls(rows):
    """Polls of gemm_wait_values(extra=1) with the cache: the record holds the value of the last wait
    that looked; a wait skips when its value is at most that."""
    polls = 0
    for r in rows:
        seen = None
        for by in r:
            v = by % 2
            if seen is None or v > seen:
                polls += 1
                seen = v
    return polls


@cu.requires_nvrtc
def test_lowering_record_guard_and_tma_store():
    """The record is two registers of the producer thread declared before its tile loop; the wait sits
    under the guard `seen_at != element || seen < value`; the consumers store C with the plain GEMM's
    TMA-store epilogue. TL_DISABLE_WAIT_CACHE and one CTA per tile (no loop to cache across) keep the
    plain wait; a T.wait(cmp="eq") is never cached."""
    src = cu.build(allgather_gemm_ce(512, 512, 256, 2, 2, 128, 256, 64, num_stages=4, threads=256), "sm_90a")["source"]
    cons, prod = src.split("tl::setmaxnreg_dec")
    assert "tl::tma_store(" in cons and "tl::dist::" not in cons.replace("tl::dist::rank()", "")
    decl = prod.index("long long tl_wait_seen_at0[1];")
    assert decl < prod.index("for (int tile_iter") < prod.index("tl::dist::wait<tl::dist::kThread>")
    assert re.search(r"if \(\(\(tl_wait_seen_at0\[0\] != static_cast<long long>\(\(t_1 >> 1\)\)\) \|\| "
                     r"\(tl_wait_seen0\[0\] < static_cast<unsigned int>\(static_cast<long long>\(epoch\)\)\)\)\) \{\n"
                     r"\s*tl::dist::wait<tl::dist::kThread>\(\(&flags\[\(t_1 >> 1\)\]\)", prod), prod
    for configs in (OFF, {"tl.disable_persistent": True}):
        src = cu.build(allgather_gemm_ce(512, 512, 256, 2, 2, 128, 256, 64, num_stages=4, threads=256), "sm_90a",
                       configs)["source"]
        assert "tl_wait_seen" not in src and src.count("tl::dist::wait<tl::dist::kThread>") == 1
    src = cu.build(gemm_wait_values(512, 128, 64, 1, cmp="eq"), "sm_90a")["source"]
    assert "tile_iter" in src and "tl_wait_seen" not in src and "tl::dist::wait<tl::dist::kThread>" in src


@cu.requires_nvrtc
@pytest.mark.parametrize("configs", [{}, OFF, {"tl.disable_persistent": True}])
def test_ce_kernel_has_no_call_that_serializes_wgmma(configs):
    """A T.wait's failure path in a warp-specialized kernel traps without printf: a call anywhere in
    the kernel makes ptxas serialize every wgmma (C7510, 'wgmma pipeline crossing function boundary'),
    which cost the CE GEMM 7-14% against the plain GEMM on an H100 (2026-11-27). The ptxas log of
    the sm_90a build says when it serializes; no stack frame (the printf's) either."""
    built = cu.build(allgather_gemm_ce(512, 512, 256, 2, 2, 128, 256, 64, num_stages=4, threads=256), "sm_90a",
                     configs)
    assert "tl::dist::wait<tl::dist::kThread>" in built["source"]
    assert "serialized" not in built["log"] and "C7510" not in built["log"], built["log"]
    assert all(u["stack_frame_bytes"] == 0 for u in built["usage"]), built["usage"]


@pytest.mark.parametrize("first,count", [(3, 34), (8, 4), (0, 0)])
def test_copy_engine_barrier_kernel(first, count):
    """CopyEngineAllGather's barrier kernel (tilelang.distributed.copy_engine, _barrier_func), one device
    on the emulator: it adds 1 to the helper's counter, waits for the counter to reach the target
    (barrier number x world), then sets flags[first, first + count) to the epoch and nothing else (more
    than 32 flags: the block loops; finish() passes count 0). A target not reached (a peer that has not
    arrived) is a wait that never completes."""
    from tilelang.distributed.copy_engine import _barrier_func
    n = 40
    flags = rng.integers(0, 5, n).astype(np.uint32)
    r = cu.EmuRunner(_barrier_func(n), "sm_90a")
    sync, out = r(np.array([4], np.uint64), flags, 5, first, count, 7)
    want = flags.copy()
    want[first:first + count] = 7
    np.testing.assert_array_equal(out, want)
    assert sync[0] == 5 and r.report["races"] == []
    with pytest.raises(RuntimeError, match=r"never completes: sync\[0\] is 5, waiting for >= 6"):
        r(np.array([4], np.uint64), flags, 6, first, count, 7)
    if cu.has_nvrtc():  # and it compiles (the GPU tier runs it: scripts/gpu_distributed.sh)
        for arch in cu.COMPILE_ARCHS:
            assert "tl::dist::signal" in cu.build(_barrier_func(n), arch)["source"]
