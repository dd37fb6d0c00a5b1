"""Calling compiled kernels: dtypes, scalars, dynamic and strided shapes, kernel-side errors."""
import importlib.util

import ml_dtypes
import numpy as np
import pytest

import tilelang
from rt_kernels import add_1d, checked, printing, rows_dynamic, scale_prefix, strided_rows

HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "int64", "uint8", "uint16"])
def test_numpy_dtypes(dtype, rng):
    k = tilelang.compile(add_1d(512, 128, dtype), out_idx=[-1])
    np_dtype = np.dtype(dtype)
    if np_dtype.kind == "f":
        a, b = rng.standard_normal(512).astype(np_dtype), rng.standard_normal(512).astype(np_dtype)
    else:
        a, b = rng.integers(0, 50, 512).astype(np_dtype), rng.integers(0, 50, 512).astype(np_dtype)
    c = k(a, b)
    assert c.dtype == np_dtype
    np.testing.assert_array_equal(c, (a + b).astype(np_dtype))


@pytest.mark.parametrize("dtype,np_type", [("bfloat16", ml_dtypes.bfloat16), ("float8_e4m3", ml_dtypes.float8_e4m3fn),
                                           ("float8_e5m2", ml_dtypes.float8_e5m2)])
def test_ml_dtypes_arrays(dtype, np_type, rng):
    k = tilelang.compile(add_1d(256, 128, dtype), out_idx=[-1])
    a = rng.integers(-4, 5, 256).astype(np.float32).astype(np_type)  # exactly representable sums
    b = rng.integers(-4, 5, 256).astype(np.float32).astype(np_type)
    c = k(a, b)
    assert c.dtype == np.dtype(np_type)
    np.testing.assert_array_equal(c.astype(np.float32), a.astype(np.float32) + b.astype(np.float32))
    # The bits are what matter: a uint16 array is not a bfloat16 one.
    with pytest.raises(tilelang.ArgumentError, match=f"expects dtype {dtype}, got uint"):
        k(a.view(np.uint16 if dtype == "bfloat16" else np.uint8), b)


def test_scalars_of_each_kind(rng):
    k = tilelang.compile(scale_prefix(256), out_idx=[1])
    a = rng.random(256, dtype=np.float32)
    idx = np.arange(256)
    np.testing.assert_allclose(k(a, 2.5, 100, False), np.where(idx < 100, a * 2.5, 0), rtol=1e-6)
    # ints for floats, numpy scalars, 0-d arrays, bools as 0/1
    np.testing.assert_allclose(k(a, 3, np.int64(7), np.bool_(True)), np.where(idx < 7, -a * 3, 0), rtol=1e-6)
    np.testing.assert_allclose(k(a, np.float32(0.5), np.array(256), 1), -a * 0.5, rtol=1e-6)


def test_dynamic_dimension_binds_per_call(rng):
    k = tilelang.compile(rows_dynamic(), out_idx=[1])
    assert k.dynamic_vars == ["m"]
    for m in (1, 16, 33, 200):
        a = rng.random((m, 64), dtype=np.float32)
        out = k(a)
        assert out.shape == (m, 64)
        np.testing.assert_array_equal(out, 2 * a)


def test_strided_tensor_binds_its_stride(rng):
    k = tilelang.compile(strided_rows(), out_idx=[1])
    wide = rng.random((12, 30), dtype=np.float32)
    x = wide[2:9, 5:13]  # leading stride 30, inner stride 1
    np.testing.assert_array_equal(k(x), x + 1)
    dense = np.ascontiguousarray(x)
    np.testing.assert_array_equal(k(dense), x + 1)


def test_device_assert_raises_after_launch_and_kernel_survives(rng):
    k = tilelang.compile(checked(256), out_idx=[1])
    a = rng.random(256, dtype=np.float32)
    bad = a.copy()
    bad[77] = -1.0
    with pytest.raises(tilelang.DeviceRuntimeError, match="A must be non-negative") as info:
        k(bad)
    assert "rt_kernels.py" in str(info.value)  # the assert's source location
    np.testing.assert_array_equal(k(a), 3 * a)


def test_kernel_print_reaches_stdout(capfd):
    k = tilelang.compile(printing())
    k(np.array([5, 6, 7, 8], dtype=np.int32))
    assert "value 7" in capfd.readouterr().out


def test_large_grid_uses_every_block(rng):
    n = 1 << 18
    k = tilelang.compile(add_1d(n, 256), out_idx=[-1])
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    np.testing.assert_array_equal(k(a, b), a + b)


def test_readonly_inputs_are_accepted(rng):
    k = tilelang.compile(add_1d(256, 128), out_idx=[-1])
    a = rng.random(256, dtype=np.float32)
    a.flags.writeable = False
    np.testing.assert_array_equal(k(a, a), 2 * a)


@pytest.mark.torch
def test_torch_cpu_tensors():
    import torch
    k = tilelang.compile(add_1d(512, 128), out_idx=[-1], target="cpu")  # torch CPU tensors: a cpu kernel
    a, b = torch.rand(512), torch.rand(512)
    c = k(a, b)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32
    assert torch.equal(c, a + b)
    kb = tilelang.compile(add_1d(256, 128, "bfloat16"), out_idx=[-1], target="cpu")
    x = torch.randint(-4, 5, (256,)).to(torch.bfloat16)
    assert torch.equal(kb(x, x), x + x)


class DLPackOnly:
    """A tensor from a framework tilelang knows nothing about: it speaks only DLPack (no buffer protocol)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def _dlpack_only_call(rng):
    k = tilelang.compile(add_1d(512, 128), out_idx=[-1], target="cpu")
    a, b = rng.random(512, dtype=np.float32), rng.random(512, dtype=np.float32)
    c = k(DLPackOnly(a), DLPackOnly(b))
    assert isinstance(c, np.ndarray)  # outputs of frameworks without an allocator here are numpy arrays
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(tilelang.ArgumentError, match="parameter 'B'.*expects dtype float32, got float64"):
        k(DLPackOnly(a), DLPackOnly(b.astype(np.float64)))


def test_dlpack_only_framework(rng):
    _dlpack_only_call(rng)


@pytest.mark.torch
def test_dlpack_only_framework_with_torch_imported(rng):
    """With torch in sys.modules the torch fast paths (tensor reads, stream, allocation) must not claim
    another framework's tensors."""
    import torch  # noqa: F401
    _dlpack_only_call(rng)


def _to_float64(n, dtype):
    import tilelang.language as T

    @T.prim_func
    def f(A: T.Tensor((n,), dtype), B: T.Tensor((n,), "float64")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = T.cast(A[i], "float64")
    return f


_DLPACK_DTYPES = ["bool", "int8", "uint16", "int64", "float16", "bfloat16", "float32", "float64", "float8_e4m3fn",
                  "float8_e5m2"]


@pytest.mark.torch
@pytest.mark.parametrize("name", _DLPACK_DTYPES)
def test_dlpack_dtype_codes(name, rng):
    """Every DLPack dtype code tilelang maps (bindings/dlpack.h, nanobind's dtype codes) reads as its
    type, through torch's C exchange API (plain torch tensors) and through nanobind's generic ndarray
    import (a DLPack-only wrapper): the values, widened to float64 by the kernel, equal torch's own
    widening of the same tensor."""
    import torch
    k = tilelang.compile(_to_float64(96, name.replace("e4m3fn", "e4m3")), out_idx=[-1], target="cpu")
    x = torch.from_numpy(rng.standard_normal(96) * 8).to(getattr(torch, name))
    ref = x.to(torch.float64).numpy()
    out = k(x)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_array_equal(np.asarray(k(DLPackOnly(x))), ref)


@pytest.mark.torch
def test_dlpack_unsupported_dtype():
    import torch
    k = tilelang.compile(_to_float64(8, "float32"), out_idx=[-1], target="cpu")
    z = torch.zeros(8, dtype=torch.complex64)
    with pytest.raises(tilelang.ArgumentError, match="complex64.*not support"):
        k(z)
    with pytest.raises(tilelang.ArgumentError, match="DLPack dtype \\(code 5, 64 bits\\).*not support"):
        k(DLPackOnly(z))


def test_hand_written_kernel_source(rng):
    """_core._compile_source builds a kernel written directly against include/tl/cpu/abi.h."""
    source = r'''
#include "tl/cpu/abi.h"
struct Ctx { const double* x; double* y; long n; };
static void block(void* p, int64_t b) {
  Ctx* c = (Ctx*)p;
  for (long i = b * 8; i < (b + 1) * 8 && i < c->n; ++i) c->y[i] = c->x[i] * c->x[i];
}
extern "C" __attribute__((visibility("default")))
int32_t tl_kernel_entry(const TLArg* args, int32_t num_args, const TLRuntimeAPI* api) {
  Ctx c{(const double*)args[0].ptr, (double*)args[1].ptr, (long)args[2].i64};
  api->parallel_for(api->pool, (c.n + 7) / 8, block, &c);
  return 0;
}
'''
    handle = tilelang._core._compile_source("square", [("X", "float64", ["n"]), ("Y", "float64", ["n"])], source,
                                            out_idx=[1])
    k = tilelang.JITKernel(_from=handle)
    x = rng.standard_normal(100)
    np.testing.assert_array_equal(k(x), x * x)
    assert k.get_kernel_source() == source and k.dynamic_vars == ["n"]
