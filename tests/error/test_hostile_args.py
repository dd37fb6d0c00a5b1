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
    (lambda torch: torch.nested.nested_tensor([torch.zeros(N), torch.zeros(N // 2)]),
     "a nested torch tensor (torch.nested): its components have different shapes and no single strided layout"),
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


# ---- torch tensors whose memory does not hold their values (issue 13 red team, finding 1) --------

def strided_scale():
    """B[i] = A[i] * 2 + 1 with A read at stride 2 (the imaginary part of a complex tensor)."""
    @T.prim_func
    def f(A: T.StridedTensor((N,), (2,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * 2.0 + 1.0
    return f


def torch_views(torch, how):
    """The same float32 view of N values, read through the exchange API (a plain torch.Tensor) or
    through its attributes (a subclass: the exchange API is used only for the exact type)."""
    class Sub(torch.Tensor):
        pass
    return (lambda t: t) if how == "exchange" else (lambda t: t.as_subclass(Sub))


@pytest.mark.torch
@pytest.mark.parametrize("how", ["exchange", "attributes"])
def test_torch_negative_bit_input_is_refused_not_read_with_the_wrong_sign(how):
    import torch
    view = torch_views(torch, how)
    k = tilelang.compile(strided_scale(), target="cpu")
    z = torch.complex(torch.zeros(N), torch.arange(1, N + 1, dtype=torch.float32))
    x = view(z.conj().imag)  # values -1 .. -N, storage +1 .. +N, the negative bit set
    assert x.is_neg() and x.stride() == (2,)
    out = torch.zeros(N)
    with pytest.raises(ArgumentError) as info:
        k(x, out)
    message = str(info.value)
    assert "parameter 'A'" in message and "negative bit set" in message and "resolve_neg()" in message, message
    assert not out.any()  # nothing ran
    # The values torch shows, resolved into a stride-2 view like x, give the expected result.
    resolved = torch.zeros(2 * N)
    resolved[1::2] = x.resolve_neg()
    k(view(resolved[1::2]), out)
    expect = -np.arange(1, N + 1, dtype=np.float64) * 2 + 1
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("how", ["exchange", "attributes"])
def test_torch_negative_bit_output_is_refused(how):
    import torch
    view = torch_views(torch, how)
    k = tilelang.compile(scale_into(), target="cpu")
    base = torch.zeros(N)
    out = view(torch._neg_view(base))
    assert out.is_neg()
    with pytest.raises(ArgumentError, match=r"parameter 'B'.*negative bit set"):
        k(torch.ones(N), out)
    assert not base.any()  # not written with the wrong sign


@pytest.mark.torch
def test_torch_conjugate_bit_tensors_are_refused():
    """The conjugate bit exists only on complex tensors; no kernel takes complex, so the dtype names
    why (both read paths)."""
    import torch
    k = tilelang.compile(scale_into(), target="cpu")
    x = torch.complex(torch.ones(N), torch.ones(N)).conj()
    assert x.is_conj()
    for how in ("exchange", "attributes"):
        with pytest.raises(ArgumentError, match=r"parameter 'A'.*dtype torch.complex64, which tilelang does not support"):
            k(torch_views(torch, how)(x), torch.zeros(N))


# ---- keyword arguments (finding 12): bound by parameter name, or an ArgumentError naming them ---

def test_keyword_arguments_bind_by_parameter_name():
    k = tilelang.compile(scale_into(), target="cpu")
    a = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    expect = a.astype(np.float64) * 3 + 1
    for call in (lambda b: k(A=a, B=b), lambda b: k(B=b, A=a), lambda b: k(a, B=b)):
        b = np.zeros(N, np.float32)
        call(b)
        np.testing.assert_allclose(b, expect, rtol=1e-6)
    k_out = tilelang.compile(scale_into(), out_idx=[1], target="cpu")
    np.testing.assert_allclose(k_out(A=a), expect, rtol=1e-6)


@pytest.mark.parametrize("call,pattern", [
    (lambda k, a: k(a, C=a), r"scale\(\) got an unexpected keyword argument 'C'; its parameters are \(A, B\)"),
    (lambda k, a: k(a, A=a), r"scale\(\) got parameter 'A' both by position and by keyword"),
    (lambda k, a: k(B=a), r"scale\(\) is missing argument 'A'; its parameters are \(A, B\)"),
    (lambda k, a: k(a, a, a, B=a), r"scale\(\) takes 2 arguments"),
])
def test_bad_keyword_calls_name_the_parameters(call, pattern):
    k = tilelang.compile(scale_into(), target="cpu")
    with pytest.raises(ArgumentError, match=pattern):
        call(k, np.zeros(N, np.float32))


def test_keyword_for_a_runtime_allocated_output_is_refused():
    k = tilelang.compile(scale_into(), out_idx=[1], target="cpu")
    a = np.zeros(N, np.float32)
    with pytest.raises(ArgumentError, match=r"unexpected keyword argument 'B' \(it is allocated by the runtime"):
        k(A=a, B=a)


# ---- a cuda kernel called where no GPU is usable (finding 13) -------------------------------------

@pytest.mark.skipif(not _core.cuda.nvrtc_available()[0], reason="NVRTC not available")
def test_cuda_call_without_a_usable_device_is_a_device_error():
    """Compiling for cuda needs only NVRTC; calling needs a device. CUDA_VISIBLE_DEVICES="" hides
    every device, also on a GPU host, so the child sees what a host without a GPU sees."""
    from child_process import run_script
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env.pop("TILELANG_DISABLE_CUDA", None)
    r = run_script("""
import numpy as np, tilelang, tilelang.language as T
@T.prim_func
def kern(A: T.Tensor((16,), "float32"), C: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=16) as bx:
        for j in T.Parallel(16):
            C[j] = A[j] * 2.0
k = tilelang.compile(kern, out_idx=[1], target="cuda -arch=sm_80")
@T.prim_func
def fill(C: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=16) as bx:
        for j in T.Parallel(16):
            C[j] = 1.0
calls = [lambda: k(np.ones(16, np.float32))]  # numpy arguments are staged to the device
try:
    import torch  # with torch imported, a call with no tensor allocates its outputs on the GPU
    calls.append(lambda: tilelang.compile(fill, out_idx=[0], target="cuda -arch=sm_80")())
except ImportError:
    pass
for call in calls:
    try:
        call()
        print("no error")
    except tilelang.DeviceRuntimeError as e:
        print("DeviceRuntimeError:", e)
""", env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) >= 1, r.stdout
    for line, name in zip(lines, ["kern", "fill"]):
        assert line.startswith(f"DeviceRuntimeError: {name}(): cannot run a cuda kernel on this host: "), line
        assert "target=\"cpu\"" in line, line
