"""Item 1 of the compatibility surface: the eager @tilelang.jit style.

Tensor parameters declared in the body, sizes from T.const, outputs from T.empty, typed
compile-time parameters, defaults, keyword calls, dtypes in every spelling; compiled once per
binding; `.compile(...)` without running."""
import os
import sys

import numpy as np
import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.jit import JITImpl, JITKernel


@tilelang.jit
def scaled_add(A, B, BLOCK: int, alpha_num=1, dtype=T.float32):
    N = T.const("N")
    A: T.Tensor((N,), dtype)
    B: T.Tensor((N,), dtype)
    C = T.empty((N,), dtype)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
        for i in T.Parallel(BLOCK):
            if bx * BLOCK + i < N:
                C[bx * BLOCK + i] = A[bx * BLOCK + i] * alpha_num + B[bx * BLOCK + i]
    return C


@tilelang.jit
def outer_add(a, b, BM: int, BN: int):
    M, N = T.const("M N")  # space separated
    a: T.Tensor((M,), T.float32)
    b: T.Tensor((N,), T.float32)
    out = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=64) as (bx, by):
        tile = T.alloc_fragment((BM, BN), T.float32)
        for i, j in T.Parallel(BM, BN):
            tile[i, j] = a[by * BM + i] + b[bx * BN + j]
        T.copy(tile, out[by * BM, bx * BN])
    return out


@tilelang.jit
def row_stats(X, block_M: int = 16, accum_dtype="float32"):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float16)
    row_sum = T.empty((M,), accum_dtype)
    row_max = T.empty((M,), accum_dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        tile = T.alloc_fragment((block_M, N), accum_dtype)
        s = T.alloc_fragment((block_M,), accum_dtype)
        m = T.alloc_fragment((block_M,), accum_dtype)
        T.copy(X[bx * block_M, 0], tile)
        T.reduce_sum(tile, s, dim=1)
        T.reduce_max(tile, m, dim=1)
        T.copy(s, row_sum[bx * block_M])
        T.copy(m, row_max[bx * block_M])
    return row_max, row_sum  # return order differs from creation order


@tilelang.jit
def axpy(x, y, alpha, block: int = 64):
    N = T.const("N")
    x: T.Tensor((N,), T.float32)
    y: T.Tensor((N,), T.float32)
    alpha: T.float32  # a run-time scalar parameter
    out = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
        for i in T.Parallel(block):
            out[bx * block + i] = alpha * x[bx * block + i] + y[bx * block + i]
    return out


def test_eager_call_binds_sizes_from_tensors_and_returns_outputs(device):
    a = torch.randn(1000, device=device)
    b = torch.randn(1000, device=device)
    c = scaled_add(a, b, 256)
    assert isinstance(c, torch.Tensor) and c.device.type == device and c.shape == (1000,)
    torch.testing.assert_close(c, a + b)
    c3 = scaled_add(a, b, BLOCK=128, alpha_num=3)  # keyword call, a default overridden
    torch.testing.assert_close(c3, 3 * a + b)
    # 0.5 and 0 differ from 3 in type or value: each is its own kernel, also on repeated calls
    for _ in range(2):
        torch.testing.assert_close(scaled_add(a, b, BLOCK=128, alpha_num=0.5), 0.5 * a + b)
        torch.testing.assert_close(scaled_add(a, b, BLOCK=128, alpha_num=True), a + b)
        torch.testing.assert_close(scaled_add(a, b, BLOCK=128, alpha_num=3), 3 * a + b)


def test_eager_compiles_once_per_binding(device, monkeypatch):
    jit_module = sys.modules["tilelang.jit"]  # `tilelang.jit` the attribute is the decorator
    calls = []
    real = jit_module.compile

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(jit_module, "compile", counting)

    @tilelang.jit
    def copy1d(A, BLOCK: int):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B = T.empty((N,), T.float32)
        with T.Kernel(T.ceildiv(N, BLOCK), threads=32) as bx:
            for i in T.Parallel(BLOCK):
                B[bx * BLOCK + i] = A[bx * BLOCK + i] + 1.0
        return B

    x = torch.randn(256, device=device)
    for _ in range(3):
        torch.testing.assert_close(copy1d(x, 64), x + 1)
    assert len(calls) == 1  # one binding (N=256, BLOCK=64): compiled once
    y = torch.randn(512, device=device)
    torch.testing.assert_close(copy1d(y, 64), y + 1)
    torch.testing.assert_close(copy1d(x, BLOCK=128), x + 1)
    assert len(calls) == 3  # a new N, a new BLOCK: one compile each
    torch.testing.assert_close(copy1d(y, 64), y + 1)
    assert len(calls) == 3


def test_compile_without_running(device):
    kernel = outer_add.compile(M=48, N=40, BM=16, BN=8)
    assert isinstance(kernel, JITKernel) and isinstance(outer_add, JITImpl)
    assert [p.name for p in kernel.params] == ["a", "b", "out"]
    assert kernel.params[-1].shape == (48, 40) and kernel.params[-1].dtype == "float32"
    a = torch.randn(48, device=device)
    b = torch.randn(40, device=device)
    torch.testing.assert_close(kernel(a, b), a[:, None] + b[None, :])
    # The same binding through a call reuses the kernel.
    torch.testing.assert_close(outer_add(a, b, BM=16, BN=8), a[:, None] + b[None, :])


def test_two_outputs_in_return_order(device):
    x = torch.randn(64, 96, device=device).half()
    mx, sm = row_stats(x)
    torch.testing.assert_close(mx, x.float().amax(dim=1), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(sm, x.float().sum(dim=1), rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("dtype", ["float16", T.float16, torch.float16, T.dtype(torch.float16)])
def test_dtype_arguments_in_every_spelling(device, dtype):
    a = torch.randn(300, device=device).half()
    b = torch.randn(300, device=device).half()
    c = scaled_add(a, b, 128, dtype=dtype)
    assert c.dtype == torch.float16
    torch.testing.assert_close(c, a + b, rtol=1e-3, atol=1e-3)
    assert T.dtype(torch.float16) == "float16" and T.dtype(torch.bfloat16) == T.bfloat16


def test_runtime_scalar_parameter(device):
    x = torch.randn(128, device=device)
    y = torch.randn(128, device=device)
    torch.testing.assert_close(axpy(x, y, alpha=2.5), 2.5 * x + y)
    torch.testing.assert_close(axpy(x, y, -1.0, 32), -x + y)
    kernel = axpy.compile(N=128)
    assert [p.name for p in kernel.params] == ["x", "y", "alpha", "out"]


def test_signature_annotated_tensors_are_eager(device):
    @tilelang.jit
    def negate(A: T.Tensor((64,), "float32"), threads: int = 32):
        B = T.empty((64,), "float32")
        with T.Kernel(1, threads=threads):
            for i in T.Parallel(64):
                B[i] = -A[i]
        return B

    x = torch.randn(64, device=device)
    torch.testing.assert_close(negate(x), -x)
    assert negate.mode == "eager"


def test_t_empty_in_a_prim_func_sets_out_idx(device):
    @T.prim_func
    def double(A: T.Tensor((128,), T.float32)):
        B = T.empty((128,), T.float32)
        with T.Kernel(2, threads=64) as bx:
            for i in T.Parallel(64):
                B[bx * 64 + i] = A[bx * 64 + i] * 2.0
        return B

    kernel = tilelang.compile(double)
    x = torch.randn(128, device=device)
    torch.testing.assert_close(kernel(x), 2 * x)
    with pytest.raises(ValueError, match="out_idx"):
        tilelang.compile(double, out_idx=[-1])


def test_lazy_builders_still_return_kernels(device):
    @tilelang.jit(out_idx=[-1])
    def add(N, block=64):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
                for i in T.Parallel(block):
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
        return main

    assert add.mode == "lazy"

    @tilelang.jit(out_idx=[-1])
    def lazy_with_numpy_calls(N):
        table = np.empty(4)  # `.empty(` / `.const(` of other modules do not make a builder eager
        del table
        return add.get_tir(N)

    assert lazy_with_numpy_calls.mode == "lazy"
    k = add(256)
    assert k is add(256) and k is add.compile(256)
    a, b = torch.randn(256, device=device), torch.randn(256, device=device)
    torch.testing.assert_close(k(a, b), a + b)


def test_numpy_arrays_work_without_torch_tensors():
    # numpy in, numpy out: the eager style does not need torch.
    a = np.random.default_rng(0).standard_normal(200).astype(np.float32)
    b = np.random.default_rng(1).standard_normal(200).astype(np.float32)
    if os.environ.get("TL_COMPAT_DEVICE", "cpu") != "cpu":
        pytest.skip("numpy arrays run on the cpu target")
    c = scaled_add(a, b, 64)
    assert isinstance(c, np.ndarray)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_eager_errors_are_actionable(device):
    x = torch.randn(64, device=device)
    with pytest.raises(TypeError, match="no value for T.const 'N'"):
        scaled_add.compile(BLOCK=32)
    with pytest.raises(TypeError, match="missing tensor argument"):
        scaled_add(x, BLOCK=32, N=64)
    with pytest.raises(TypeError, match="unexpected keyword"):
        scaled_add(x, x, 32, P=3)
    with pytest.raises(TypeError, match="compile-time argument 'BLOCK'"):
        scaled_add(x, x)
    with pytest.raises(ValueError, match="out_idx"):
        @tilelang.jit(out_idx=[-1])
        def bad(A):
            N = T.const("N")
            A: T.Tensor((N,), T.float32)
            B = T.empty((N,), T.float32)
            with T.Kernel(1, threads=32):
                B[0] = A[0]
            return B

    @tilelang.jit
    def not_returned(A):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B = T.empty((N,), T.float32)
        with T.Kernel(1, threads=32):
            B[0] = A[0]

    with pytest.raises(tilelang.TileLangSyntaxError, match="never returned"):
        not_returned(x)
    with pytest.raises(tilelang.TileLangSyntaxError, match="T.const"):
        T.const("N")


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC: True})
def npu_add(A, B, block: int = 64):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, 2 * block), is_npu=True) as (cid, vid):
        a = T.alloc_ub((block,), T.float32)
        b = T.alloc_ub((block,), T.float32)
        c = T.alloc_ub((block,), T.float32)
        base = (cid * 2 + vid) * block
        T.copy(A[base], a)
        T.copy(B[base], b)
        with T.Scope("V"):
            T.add(c, a, b)
        T.copy(c, C[base])
    return C


def test_eager_style_on_ascend():
    # An Ascend-form kernel (T.Kernel(..., is_npu=True)) in the eager style runs on the simulator
    # ("auto" picks ascend for it), with torch CPU tensors or numpy arrays.
    a, b = torch.randn(512), torch.randn(512)
    c = npu_add(a, b)
    assert isinstance(c, torch.Tensor)
    torch.testing.assert_close(c, a + b)
    assert str(npu_add.compile(N=512).target).startswith("ascend")
    np.testing.assert_allclose(npu_add(a.numpy(), b.numpy()), (a + b).numpy(), rtol=1e-6)


def test_eager_style_compiles_for_cuda():
    # NVRTC compiles without a GPU: the eager style reaches the cuda backend unchanged.
    from tilelang import _core
    ok = _core.cuda.nvrtc_available()
    if not (ok[0] if isinstance(ok, tuple) else ok):
        pytest.skip("NVRTC is not available")

    @tilelang.jit(target="cuda -arch=sm_90a")
    def add_f16(A, B, BLOCK: int = 256):
        N = T.const("N")
        A: T.Tensor((N,), T.float16)
        B: T.Tensor((N,), T.float16)
        C = T.empty((N,), T.float16)
        with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
            for i in T.Parallel(BLOCK):
                C[bx * BLOCK + i] = A[bx * BLOCK + i] + B[bx * BLOCK + i]
        return C

    kernel = add_f16.compile(N=4096)
    assert str(kernel.target).startswith("cuda") and "__global__" in kernel.get_kernel_source()
    assert [p.name for p in kernel.params] == ["A", "B", "C"] and list(kernel.out_idx) == [2]


def test_an_error_in_the_declarations_is_reported_as_such(device):
    @tilelang.jit
    def broken(A):
        M = T.const("M")
        dt = T.no_such_dtype  # bad-declaration
        A: T.Tensor((M,), dt)
        B = T.empty((M,), dt)
        with T.Kernel(1, threads=32):
            B[0] = A[0]
        return B

    with pytest.raises(AttributeError, match="no_such_dtype") as info:
        broken(torch.randn(32, device=device))
    assert f"{__file__}:" in str(info.value)  # located at the user's line


def test_a_call_with_no_tensor_argument_returns_torch_tensors(device):
    # TileLang's programs are torch programs: with torch imported, outputs of a call that passes no
    # tensor are torch tensors on the kernel's device (numpy arrays when torch is not imported:
    # test_compat_numpy_only.py).
    @tilelang.jit(out_idx=-1)
    def inf_kernel(dtype):
        @T.prim_func
        def main(A: T.Tensor((32,), dtype)):
            with T.Kernel(1, threads=32):
                T.fill(A, T.infinity(dtype))
        return main

    for dtype in ("float32", "float16"):
        out = inf_kernel(dtype)()
        assert isinstance(out, torch.Tensor) and out.device.type == device
        assert torch.all(out == torch.inf)


@tilelang.jit
def test_kernel_named_like_a_test(A: T.Tensor((16,), T.float32)):
    with T.Kernel(1, threads=16):
        for i in T.Parallel(16):
            A[i] = A[i] + 1.0


def test_jit_functions_named_test_are_not_collected_by_pytest(device):
    # TileLang's tests define `@tilelang.jit def test_kernel(A: ...)` at module level; pytest must not
    # take it for a test function (it would look for a fixture 'A'). It is collected only through
    # __wrapped__, which a JITImpl does not have.
    assert not hasattr(test_kernel_named_like_a_test, "__wrapped__")
    assert test_kernel_named_like_a_test.__name__ == "test_kernel_named_like_a_test"
    x = torch.zeros(16, device=device)
    test_kernel_named_like_a_test(x)
    assert torch.equal(x, torch.ones(16, device=device))
