"""Hostile call arguments: memory the kernel would write must be writable, and a tensor the binder
cannot read says what is wrong with it (no data, sparse layout) instead of only its type name.
Read-only memory the kernel only reads stays accepted."""
import atexit
import os
import shutil
import tempfile

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _core
from tilelang.errors import ArgumentError

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)

N = 16
TARGETS = ["cpu", "ascend"]


def scale_into(dtype="float32"):
    """B[i] = A[i] * 3 + 1: A is only read, B only written (in place: no out_idx)."""
    @T.prim_func
    def scale(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * 3 + 1
    return scale


def scale_into_npu():
    @T.prim_func
    def scale(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            x = T.alloc_ub((N // 2,), "float32")
            T.copy(A[vid * (N // 2)], x)
            for i in T.Parallel(N // 2):
                x[i] = x[i] * 3 + 1
            T.copy(x, B[vid * (N // 2)])
    return scale


def accumulate():
    """A tile op that reads and writes its destination: T.atomic_add into C."""
    @T.prim_func
    def acc(A: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N) as bx:
            T.atomic_add(C[0:N], A[0:N])
    return acc


def compiled(target):
    return tilelang.compile(scale_into_npu() if target == "ascend" else scale_into(), target=target)


def read_only(a):
    a = np.array(a)
    a.setflags(write=False)
    return a


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_output_is_refused_by_name(target):
    k = compiled(target)
    a = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    b = read_only(np.zeros(N, np.float32))
    with pytest.raises(ArgumentError) as info:
        k(a, b)
    message = str(info.value)
    assert "parameter 'B' (B: float32[16])" in message and "read-only" in message and "numpy.array" in message
    assert (b == 0).all()


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_input_that_is_only_read_is_accepted(target):
    k = compiled(target)
    a = read_only(np.random.default_rng(1).standard_normal(N).astype(np.float32))
    b = np.zeros(N, np.float32)
    k(a, b)
    np.testing.assert_allclose(b, a.astype(np.float64) * 3 + 1, rtol=1e-6)


def test_tile_op_destination_must_be_writable():
    k = tilelang.compile(accumulate(), target="cpu")
    a = np.random.default_rng(2).standard_normal(N).astype(np.float32)
    with pytest.raises(ArgumentError, match="parameter 'C'.*read-only"):
        k(a, read_only(np.ones(N, np.float32)))
    c = np.ones(N, np.float32)
    k(a, c)
    np.testing.assert_allclose(c, 1 + a, rtol=1e-6)


def test_bytes_backed_buffers_are_read_only():
    k = tilelang.compile(scale_into("uint8"), target="cpu")
    src = bytes(range(N))
    with pytest.raises(ArgumentError, match="parameter 'B'.*read-only"):
        k(np.zeros(N, np.uint8), memoryview(src))
    with pytest.raises(ArgumentError, match="parameter 'B'.*read-only"):
        k(np.zeros(N, np.uint8), np.frombuffer(src, np.uint8))
    assert src == bytes(range(N))
    out = bytearray(N)  # writable: accepted, and written
    k(np.frombuffer(src, np.uint8), memoryview(out))
    assert list(out) == [(3 * i + 1) % 256 for i in range(N)]


class DLPackOnly:
    """Exposes only the DLPack protocol of an array (as cupy or jax arrays do)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_read_only_dlpack_export_is_refused():
    k = tilelang.compile(scale_into(), target="cpu")
    a = np.random.default_rng(3).standard_normal(N).astype(np.float32)
    b = read_only(np.zeros(N, np.float32))
    with pytest.raises(ArgumentError, match="parameter 'B'.*read-only"):
        k(DLPackOnly(a), DLPackOnly(b))
    c = np.zeros(N, np.float32)
    k(DLPackOnly(read_only(a)), DLPackOnly(c))  # a read-only input is fine
    np.testing.assert_allclose(c, a.astype(np.float64) * 3 + 1, rtol=1e-6)


@pytest.mark.skipif(not _core.cuda.nvrtc_available()[0], reason="NVRTC not available")
def test_read_only_numpy_array_staged_to_cuda_is_refused_before_launch():
    """numpy arguments of a cuda kernel are copied to the device and back; a read-only one the
    kernel writes would silently keep its contents, so the call is refused before staging (no GPU
    is needed to reach the check)."""
    k = tilelang.compile(scale_into(), target="cuda -arch=sm_80")
    b = read_only(np.zeros(N, np.float32))
    with pytest.raises(ArgumentError, match="parameter 'B'.*read-only"):
        k(np.ones(N, np.float32), b)


# ---- torch tensors the binder cannot read (CPU torch; the cuda path reads them the same way) ----

@pytest.mark.torch
@pytest.mark.parametrize("make,pattern", [
    (lambda torch: torch.empty(N, device="meta"), "a torch tensor on the 'meta' device, which has no data"),
    (lambda torch: torch.zeros(N).to_sparse(), "a sparse torch tensor (layout torch.sparse_coo)"),
    (lambda torch: torch.zeros(1, N).to_sparse_csr(), "a sparse torch tensor (layout torch.sparse_csr)"),
])
def test_unreadable_torch_tensors_say_what_is_wrong(make, pattern):
    import warnings

    import torch
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
    k = tilelang.compile(scale_into(), target="cpu")
    with pytest.raises(ArgumentError) as info:
        k(make(torch), torch.zeros(N))
    message = str(info.value)
    assert "parameter 'A'" in message and pattern in message, message
    assert "got Tensor" not in message
