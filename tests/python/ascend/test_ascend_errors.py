"""User-facing failures of the ascend target: typed exceptions whose messages name the culprit and
the Python source line of the T.* call."""
import os

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import ResourceError, SyncError, TileLangSyntaxError

HERE = os.path.basename(__file__)


def compile_ascend(func, configs=None):
    return tilelang._core.ascend.compile(func.ir, configs or {}, "ascend")


def line_of(text):
    """Line number of the first line of this file containing `text` (a marker comment)."""
    with open(__file__) as f:
        for i, ln in enumerate(f, 1):
            if text in ln and "line_of" not in ln:
                return i
    raise AssertionError(text)


def test_illegal_copy_names_memories_and_alternative():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            c = T.alloc_L0C((64, 64), "float32")
            u = T.alloc_ub((64, 64), "float32")
            T.copy(c, u)  # marker: illegal-copy
    with pytest.raises(TileLangSyntaxError) as e:
        compile_ascend(k)
    msg = str(e.value)
    assert f"{HERE}:{line_of('marker: illegal-copy')}" in msg
    assert "from L0C ('c') to UB ('u')" in msg and "Legal copies" in msg and "GM workspace" in msg


def test_op_in_the_wrong_scope():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            u = T.alloc_ub((64,), "float32")
            with T.Scope("C"):
                T.copy(A[0], u)  # marker: wrong-scope
    with pytest.raises(TileLangSyntaxError, match=r"vector core .* inside T.Scope\(\"C\"\)") as e:
        compile_ascend(k)
    assert f":{line_of('marker: wrong-scope')}" in str(e.value)


def test_flag_pipes_of_two_cores_and_event_range():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            T.set_flag("fix", "v", 0)
    with pytest.raises(TileLangSyntaxError, match="cube-core pipe with a vector-core pipe"):
        compile_ascend(k)

    @T.prim_func
    def k2(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            with T.Scope("V"):
                T.set_flag("mte2", "v", 9)
                T.wait_flag("mte2", "v", 9)
    with pytest.raises(TileLangSyntaxError, match=r"event id 9 is out of range \[0, 8\)"):
        compile_ascend(k2)


def test_ub_over_capacity_lists_buffers():
    @T.prim_func
    def k(A: T.Tensor((65536,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((32768,), "float32")
            b = T.alloc_ub((32768,), "float32")
            with T.Scope("V"):
                T.copy(A[0], a)
                T.tile.exp(b, a)
                T.copy(b, A[0])
    with pytest.raises(ResourceError) as e:
        compile_ascend(k)
    msg = str(e.value)
    assert "UB over capacity" in msg and "'a' float32[32768] = 131072 bytes" in msg and "'b'" in msg


def test_race_names_both_python_lines_and_pipes():
    @T.prim_func
    def k(A: T.Tensor((128,), "float16"), B: T.Tensor((128,), "float16")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((64,), "float16")
            with T.Scope("V"):
                T.copy(A[vid * 64], a)  # marker: race-load
                T.tile.relu(a, a)  # marker: race-use
                T.copy(a, B[vid * 64])
    kern = compile_ascend(k)
    a = np.ones(128, np.float16)
    b = np.zeros(128, np.float16)
    with pytest.raises(SyncError) as e:
        kern.launch([a, b])
    msg = str(e.value)
    assert "race (RAW) on UB" in msg and "pipe MTE2" in msg and "pipe V" in msg
    assert f"{HERE}:{line_of('marker: race-load')}" in msg and f"{HERE}:{line_of('marker: race-use')}" in msg
    assert "block 0 AIV0" in msg
    # Lenient mode orders it silently, as the vendor compiler's implicit syncs would.
    lenient = compile_ascend(k, {"tl.ascend_sim_lenient": True})
    lenient.launch([a, b])
    assert np.all(b == 1)


def test_auto_cv_sync_requires_cv_combine():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            pass
    compile_ascend(k, {"tl.ascend_auto_cv_combine": True})  # an empty kernel splits into nothing
    with pytest.raises(ValueError, match="requires TL_ASCEND_AUTO_CV_COMBINE"):
        compile_ascend(k, {"tl.ascend_auto_cross_core_sync": True})
