"""cuda: T.async_copy (cp.async groups + one commit, no wait), T.ptx_commit_group and
T.ptx_wait_group, as TileLang's programs use them for hand-written pipelines. Compiled for sm_80 /
sm_90a with NVRTC and run on the cuda emulator, which also reports reads of cp.async data before
its wait and barrier, against numpy in float64 (no GPU needed)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from cuda_util import COMPILE_ARCHS, EmuRunner, build, requires_nvrtc
from tilelang import _core

rng = np.random.default_rng(12)


def emulate(func, *args):
    r = EmuRunner(func)
    out = r(*args)
    assert r.report["races"] == [], r.report["races"][:3]
    return out


def staged(M, N, bm, bn, dtype="float16"):
    # One async tile load, waited for, then read by other threads (a barrier is inserted)
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            s = T.alloc_shared((bm, bn), dtype)
            f = T.alloc_fragment((bm, bn), "float32")
            T.async_copy(A[by * bm, bx * bn], s)
            T.ptx_wait_group(0)
            T.copy(s, f)
            for i, j in T.Parallel(bm, bn):
                f[i, j] = f[i, j] * 2 + 1
            T.copy(f, B[by * bm, bx * bn])

    return main


def double_buffered(M, K, bm, bk):
    # Row sums through a hand-written two-stage cp.async pipeline: the next tile is in flight
    # while the current one is reduced (T.ptx_wait_group(1) waits for all but the newest group).
    nk = K // bk

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(M // bm, threads=128) as bx:
            s0 = T.alloc_shared((bm, bk), "float16")
            s1 = T.alloc_shared((bm, bk), "float16")
            tile = T.alloc_fragment((bm, bk), "float32")
            acc = T.alloc_fragment((bm,), "float32")
            T.clear(acc)
            T.async_copy(A[bx * bm, 0], s0)
            for k2 in T.serial(nk // 2):
                T.async_copy(A[bx * bm, (2 * k2 + 1) * bk], s1)
                T.ptx_wait_group(1)
                T.copy(s0, tile)
                T.reduce_sum(tile, acc, dim=1, clear=False)
                T.async_copy(A[bx * bm, T.min(2 * k2 + 2, nk - 1) * bk], s0)
                T.ptx_wait_group(1)
                T.copy(s1, tile)
                T.reduce_sum(tile, acc, dim=1, clear=False)
            T.ptx_wait_group(0)
            T.copy(acc, Out[bx * bm])

    return main


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
def test_async_copy_compiles_to_cp_async(arch):
    r = build(double_buffered(128, 256, 64, 32), arch)
    assert r["cubin"][:4] == b"\x7fELF"
    src = r["source"]
    assert "tl::cp_async<16>" in src and "tl::cp_async_commit()" in src and "tl::cp_async_wait<1>()" in src, src


@pytest.mark.parametrize("dtype, M, N, bm, bn", [("float16", 128, 256, 64, 64), ("float32", 96, 160, 32, 64),
                                                 ("float16", 100, 72, 64, 64)])
def test_async_copy_staged_on_emulator(dtype, M, N, bm, bn):
    a = rng.standard_normal((M, N)).astype(dtype)
    out = emulate(staged(M, N, bm, bn, dtype), a, np.zeros((M, N), np.float32))[1]
    np.testing.assert_allclose(out, a.astype(np.float64) * 2 + 1, rtol=1e-6, atol=1e-6)


def test_async_copy_double_buffered_on_emulator():
    a = rng.standard_normal((128, 256)).astype(np.float16)
    out = emulate(double_buffered(128, 256, 64, 32), a, np.zeros(128, np.float32))[1]
    np.testing.assert_allclose(out, a.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3)


def test_missing_wait_is_reported_by_the_emulator():
    # Without T.ptx_wait_group the data is read before its cp.async completed: the emulator says so
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((64, 64), "float16")
            T.async_copy(A, s)
            T.copy(s, B)

    r = EmuRunner(main)
    r(np.ones((64, 64), np.float16), np.zeros((64, 64), np.float16))
    assert r.report["races"], "a read of cp.async data before its wait must be reported"


def test_async_copy_needs_global_to_shared():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((64, 64), "float16")
            T.copy(A, s)
            T.async_copy(s, B)

    with pytest.raises(TypeError, match="global memory into shared memory"):
        build(main, "sm_80")


def test_ptx_wait_group_takes_an_int():
    with pytest.raises(TypeError, match="non-negative Python int"):
        @T.prim_func
        def main(A: T.Tensor((64,), "float16")):
            with T.Kernel(1, threads=32):
                T.ptx_wait_group(-1)


def test_async_copy_in_pipelined_loop_is_left_to_the_program():
    # A T.Pipelined loop that schedules its own cp.async runs serially (no second pipeline)
    @T.prim_func
    def main(A: T.Tensor((64, 256), "float16"), Out: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((64, 32), "float16")
            tile = T.alloc_fragment((64, 32), "float32")
            acc = T.alloc_fragment((64,), "float32")
            T.clear(acc)
            for k in T.Pipelined(8, num_stages=2):
                T.async_copy(A[0, k * 32], s)
                T.ptx_wait_group(0)
                T.copy(s, tile)
                T.reduce_sum(tile, acc, dim=1, clear=False)
            T.copy(acc, Out)

    a = rng.standard_normal((64, 256)).astype(np.float16)
    out = emulate(main, a, np.zeros(64, np.float32))[1]
    np.testing.assert_allclose(out, a.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3)
    src = _core.cuda.lower_func(main.ir, "sm_80")[1]
    assert src.count("cp_async_commit") == 1, src
