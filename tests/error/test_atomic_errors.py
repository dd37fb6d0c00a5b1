"""Bitwise atomics used wrongly: T.atomic_or / atomic_and / atomic_xor on a float element, with a
float value, on a tile, with an unknown memory_order; and vector dtypes (T.float32x2, ...) as
element types. Each raises a typed error that names the construct and points at the kernel line;
the frontend keeps working afterwards."""
import os

import numpy as np
import pytest

import tilelang
import tilelang.language as T

HERE = os.path.abspath(__file__)


def at(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return f"{HERE}:{n}:"
    raise AssertionError(marker)


def bad(kind, dtype="float32"):
    @T.prim_func
    def k(A: T.Tensor((64,), dtype), B: T.Tensor((4,), dtype)):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                if kind == "or":
                    T.atomic_or(B[i % 4], A[i])  # bad-or
                elif kind == "and":
                    T.atomic_and(B[i % 4], A[i], return_prev=True)  # bad-and
                elif kind == "xor":
                    T.atomic_xor(B[i % 4], 1.5)  # bad-xor-value
                elif kind == "tile":
                    T.atomic_or(B[0:4], A[0:4])  # bad-tile
                else:
                    T.atomic_or(B[i % 4], A[i], memory_order="strong")  # bad-order
    return k


def still_works():
    @T.prim_func
    def ok(A: T.Tensor((64,), "int32"), B: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                T.atomic_or(B[0], A[i])
    a = np.arange(64, dtype=np.int32)
    b = np.zeros(1, np.int32)
    tilelang.compile(ok, target="cpu")(a, b)
    assert int(b[0]) == 63


@pytest.mark.parametrize("kind,dtype,exc,marker,fragment", [
    ("or", "float32", TypeError, "bad-or", "T.atomic_or: the destination must have an integer dtype"),
    ("and", "float16", TypeError, "bad-and", "got float16"),
    ("or", "bool", TypeError, "bad-or", "got bool"),
    ("xor", "int32", TypeError, "bad-xor-value", "T.atomic_xor: the value must be an integer, got float"),
    ("tile", "int32", NotImplementedError, "bad-tile", "T.atomic_or: only the scalar form is supported"),
    ("order", "int32", ValueError, "bad-order", "memory_order 'strong'"),
])
def test_bitwise_atomic_misuse(kind, dtype, exc, marker, fragment):
    with pytest.raises(exc) as info:
        bad(kind, dtype)
    msg = str(info.value)
    assert msg.startswith(at(marker)), msg
    assert fragment in msg, msg
    still_works()


def test_bitwise_atomic_on_ascend_is_not_implemented():
    """The Ascend simulator has no scalar atomics (as for T.atomic_add / T.atomic_max's element form):
    running one raises NotImplementedError naming the builtin, not a wrong result."""
    @T.prim_func
    def k(A: T.Tensor((64,), "int32"), B: T.Tensor((1,), "int32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            for i in T.serial(64):
                T.atomic_or(B[0], A[i])
    kern = tilelang.compile(k, target="ascend")
    with pytest.raises(NotImplementedError, match="tl.atomic_or_scalar"):
        kern(np.arange(64, dtype=np.int32), np.zeros(1, np.int32))
    still_works()


def vector_kernel(where):
    @T.prim_func
    def k(A: T.Tensor((8,), T.float32x2 if where == "param" else T.float32), B: T.Tensor((8,), T.float32)):  # vec-param
        with T.Kernel(1, threads=8):
            if where == "shared":
                s = T.alloc_shared((4,), "float16x2")  # vec-shared
                s[0] = T.float16(0)
            for i in T.Parallel(8):
                if where == "cast":
                    B[i] = T.cast(A[i], T.float32x2)  # vec-cast
                else:
                    B[i] = A[i]
    return k


@pytest.mark.parametrize("where,marker,fragment", [
    ("param", "vec-param", "T.Tensor: the vector element type float32x2 (2 x float32) is not implemented; declare the "
                           "buffer with the scalar type float32 and a last dimension 2 times longer"),
    ("shared", "vec-shared", "T.alloc_shared: the vector element type float16x2 (2 x float16)"),
    ("cast", "vec-cast", "T.cast: casting to the vector type float32x2 is not implemented"),
])
def test_vector_dtypes_are_not_implemented_at_their_line(where, marker, fragment):
    """TileLang programs name T.float32x2-style types; as element types no target here has them: a
    NotImplementedError at the line (before: a location-less error from code generation)."""
    with pytest.raises(NotImplementedError) as info:
        vector_kernel(where)
    msg = str(info.value)
    assert msg.startswith(at(marker)), msg
    assert fragment in msg, msg
    still_works()
