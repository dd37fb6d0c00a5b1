"""T.reduce_* options as TileLang's reduction tests use them: `batch=` (output elements per
batched all-reduce: checked, same result), `nan_propagate=True` for max / min / absmax (a NaN in a
row makes its result NaN; by default NaNs are skipped), T.finalize_reducer(batch=) checks, and the
one-dimensional `T.Kernel(n) as (pid,)`. Checked against float64 references on random inputs."""
import math

import pytest

import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[-1])
def reduce_kernel(M, N, op, src_scope, threads, batch, nan_propagate=False, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=threads):
            src = T.alloc_fragment((M, N), dtype) if src_scope == "fragment" else T.alloc_shared((M, N), dtype)
            dst = T.alloc_fragment((M,), dtype)
            T.copy(A, src)
            kw = {"nan_propagate": True} if nan_propagate else {}
            getattr(T, f"reduce_{op}")(src, dst, dim=1, batch=batch, **kw)
            T.copy(dst, B)

    return main


def _ref(A, op):
    A = A.double()
    return {"sum": A.sum(1), "max": A.amax(1), "min": A.amin(1), "abssum": A.abs().sum(1),
            "absmax": A.abs().amax(1)}[op]


@pytest.mark.parametrize("op, M, N, src_scope, threads, batch", [
    ("sum", 128, 64, "shared", 256, 4), ("max", 128, 128, "fragment", 256, 4), ("min", 64, 128, "shared", 128, 2),
    ("abssum", 128, 128, "fragment", 256, 8), ("absmax", 64, 64, "fragment", 128, 2)])
def test_reduce_with_batch(op, M, N, src_scope, threads, batch):
    A = randn(M, N, seed=M + N + batch)
    close(reduce_kernel(M, N, op, src_scope, threads, batch)(A), _ref(A, op), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("batch, match", [(0, "batch must be >= 1"), (256, "exceeds total output elements"),
                                          (3, "must evenly divide")])
def test_reduce_bad_batch(batch, match):
    with pytest.raises(ValueError, match=match):
        reduce_kernel(64, 32, "sum", "fragment", 128, batch)


@pytest.mark.parametrize("op", ["max", "min", "absmax"])
@pytest.mark.parametrize("src_scope", ["fragment", "shared"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nan_propagate(op, src_scope, dtype):
    M, N = 64, 128
    A = randn(M, N, seed=11, dtype=getattr(torch, dtype))
    A[3, 7] = float("nan")
    A[10, N - 1] = float("nan")
    A[20, 0] = float("nan")
    got = reduce_kernel(M, N, op, src_scope, 128, 1, True, dtype)(A).double().cpu()
    rows = {3, 10, 20}
    ref = _ref(torch.nan_to_num(A.double(), nan=0.0).cpu(), op)
    for i in range(M):
        if i in rows:
            assert math.isnan(got[i].item()), (i, got[i])
        else:
            assert got[i].item() == ref[i].item(), (i, got[i], ref[i])
    # Without nan_propagate the NaNs are skipped (fmax / fmin)
    plain = reduce_kernel(M, N, op, src_scope, 128, 1, False, dtype)(A).double().cpu()
    big = float("-inf") if op != "min" else float("inf")
    skip = _ref(torch.where(torch.isnan(A.double()), torch.full_like(A.double(), big), A.double()).cpu(),
                op if op != "absmax" else "max") if op != "absmax" else \
        torch.nan_to_num(A.double(), nan=0.0).abs().amax(1).cpu()
    assert not torch.isnan(plain).any()
    close(plain, skip, rtol=0, atol=0)


def test_nan_propagate_only_for_max_min():
    with pytest.raises(TypeError):
        @T.prim_func
        def main(A: T.Tensor((4, 4), T.float32), B: T.Tensor((4,), T.float32)):
            with T.Kernel(1, threads=32):
                a = T.alloc_fragment((4, 4), T.float32)
                b = T.alloc_fragment((4,), T.float32)
                T.copy(A, a)
                T.reduce_sum(a, b, dim=1, nan_propagate=True)


@pytest.mark.parametrize("batch, exc, match", [(0, ValueError, "batch must be >= 1"), (-1, ValueError, ">= 1"),
                                               (128, ValueError, "exceeds total output elements"),
                                               (3, ValueError, "must evenly divide")])
def test_finalize_reducer_bad_batch(batch, exc, match):
    with pytest.raises(exc, match=match):
        @T.prim_func
        def kernel(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64,), T.float32)):
            with T.Kernel(1, threads=128):
                r = T.alloc_reducer(64, T.float32, op="sum", replication="all")
                T.clear(r)
                a = T.alloc_fragment((64, 64), T.float32)
                T.copy(A, a)
                for i, j in T.Parallel(64, 64):
                    r[i] += a[i, j]
                T.finalize_reducer(r, batch=batch)
                T.copy(r, B)


def test_finalize_reducer_with_batch():
    @tilelang.jit(out_idx=[-1])
    def k():
        @T.prim_func
        def kernel(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64,), T.float32)):
            with T.Kernel(1, threads=128):
                r = T.alloc_reducer(64, T.float32, op="sum", replication="all")
                T.clear(r)
                a = T.alloc_fragment((64, 64), T.float32)
                T.copy(A, a)
                for i, j in T.Parallel(64, 64):
                    r[i] += a[i, j]
                T.finalize_reducer(r, batch=4)
                T.copy(r, B)
        return kernel

    A = randn(64, 64, seed=13)
    close(k()(A), A.double().sum(1), rtol=1e-5, atol=1e-4)


def test_kernel_as_one_tuple():
    @tilelang.jit(out_idx=[-1])
    def k(M, N):
        @T.prim_func
        def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M,), T.float32)):
            with T.Kernel(M, threads=32) as (pid,):
                B[pid] = A[pid, 0] + A[pid, N - 1]
        return main

    A = randn(8, 16, seed=14)
    close(k(8, 16)(A), A.double()[:, 0] + A.double()[:, -1])
