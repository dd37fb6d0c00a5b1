"""Dtypes at the language boundary: strings, T.<dtype> objects, numpy and torch dtypes."""
import sys
import types

import ml_dtypes
import numpy as np
import pytest

import tilelang.language as T
from tilelang import _core as C


def test_dtype_objects_are_strings_and_callables():
    assert T.float16 == "float16" and isinstance(T.float16, str)
    assert T.bool == "bool" and T.float8_e4m3fn == "float8_e4m3"
    c = T.float32(0)
    assert c.kind == "float" and c.dtype == "float32" and c.value == 0.0
    i = T.int8(5)
    assert i.kind == "int" and i.dtype == "int8" and i.value == 5
    x = C.Var("x")
    cast = T.float16(x)
    assert cast.kind == "cast" and cast.dtype == "float16"
    assert T.bool(1).value is True
    with pytest.raises(TypeError, match="needs a value"):
        T.float32()


@pytest.mark.parametrize("spec,expected", [
    ("float", "float32"), ("half", "float16"), ("float16", "float16"), ("bfloat16", "bfloat16"),
    ("float8_e4m3fn", "float8_e4m3"), (T.int32, "int32"), (bool, "bool"), (int, "int32"), (float, "float32"),
    (np.float16, "float16"), (np.dtype("int8"), "int8"), (np.uint32, "uint32"), (np.bool_, "bool"),
    (ml_dtypes.bfloat16, "bfloat16"), (ml_dtypes.float8_e5m2, "float8_e5m2"),
])
def test_to_dtype(spec, expected):
    d = T.to_dtype(spec)
    assert d == expected and isinstance(d, T.dtype)


def test_torch_dtypes_without_importing_torch(monkeypatch):
    # A stand-in for torch: the frontend only reads str(dtype) of objects from the torch module,
    # and never imports torch itself.
    fake = types.ModuleType("torch")

    class dtype:  # noqa: N801
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    dtype.__module__ = "torch"
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert T.to_dtype(dtype("float16")) == "float16"
    assert T.to_dtype(dtype("bfloat16")) == "bfloat16"
    assert T.to_dtype(dtype("int64")) == "int64"


def test_unknown_dtype_names_the_supported_ones():
    with pytest.raises(ValueError, match="unknown dtype 'fp17'.*supported: bool"):
        T.to_dtype("fp17")
    with pytest.raises(TypeError, match="cannot use .* as a dtype"):
        T.to_dtype(object())


def test_dtypes_in_a_kernel():
    @T.prim_func
    def k(A: T.Tensor((16,), T.bfloat16), B: T.Tensor((16,), np.float32), n: T.int64, s: "float32"):
        with T.Kernel(1, threads=16) as bx:
            tx = T.get_thread_binding()
            B[tx] = T.float32(A[tx]) * s + T.cast(n, "float32")

    text = k.script()
    assert "A: global bfloat16[16], B: global float32[16], n: int64, s: float32" in text
    assert "B[tx] = cast<float32>(A[tx]) * s + cast<float32>(n)" in text
