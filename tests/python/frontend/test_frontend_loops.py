"""Loops and kernel launch forms."""
import pytest

import tilelang.language as T
from frontend_ir_eval import evaluate, find
from tilelang.errors import TileLangSyntaxError


def loops_of(func):
    return find(func.body, lambda s: s.kind == "for")


@pytest.mark.parametrize("start,stop,step", [(2, 20, 3), (0, 17, 4), (10, 0, -2), (5, 6, 7), (3, 3, 1), (9, -4, -5)])
def test_stepped_serial_loop_visits_the_python_range(start, stop, step):
    @T.prim_func
    def k(A: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            for i in range(start, stop, step):
                A[i + 10] = i
    (loop,) = loops_of(k)
    assert loop.for_kind == "serial"
    store = find(loop.body, lambda s: s.kind == "store")[0]
    if step == 1:
        assert loop.var.name == "i"
        got = [loop.min.value + t for t in range(loop.extent.value)]
    else:
        assert loop.var.name == "i_iter" and loop.min.value == 0
        assert loop.body.kind == "let" and loop.body.var.name == "i"
        got = [evaluate(loop.body.value, {loop.var: t}) for t in range(evaluate(loop.extent, {}))]
    assert got == list(range(start, stop, step))
    assert store.buffer.name == "A"


def test_stepped_loop_with_runtime_bounds():
    @T.prim_func
    def k(A: T.Tensor((64,), "int32"), lo: T.int32, hi: T.int32):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(lo, hi, 4):
                A[i] = 0
    (loop,) = loops_of(k)
    for lo, hi in [(0, 10), (3, 20), (5, 5), (7, 8)]:
        env = {k.params[1]: lo, k.params[2]: hi}
        trips = evaluate(loop.extent, env)
        assert [evaluate(loop.body.value, {**env, loop.var: t}) for t in range(trips)] == list(range(lo, hi, 4))


def test_loop_kinds_and_annotations():
    @T.prim_func
    def k(A: T.Tensor((8, 16), "float32"), n: T.int32):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(2, n):
                A[i, 0] = 0.0
            for i in T.unroll(4):
                A[i, 1] = 0.0
            for i in T.vectorized(8):
                A[0, i] = 0.0
            for i, j in T.Parallel(8, 16, coalesced_width=4):
                A[i, j] = 1.0
            for i in T.Parallel(8):
                for j in T.Parallel(16):
                    A[i, j] = 2.0
            for k in T.Pipelined(1, 9, num_stages=2, order=[0, 1, 2], stage=[0, 0, 1], cross_interval=2):
                A[k - 1, 0] = 3.0
    loops = loops_of(k)
    kinds = [(lp.for_kind, lp.var.name) for lp in loops]
    assert kinds == [("serial", "i"), ("unrolled", "i"), ("vectorized", "i"), ("parallel", "i"), ("parallel", "j"),
                     ("parallel", "i"), ("parallel", "j"), ("pipelined", "k")]
    assert repr(loops[0].min) == "2" and repr(loops[0].extent) == "n - 2"
    assert loops[3].annotations == {} and loops[4].annotations == {"coalesced_width": 4}
    pipe = loops[-1]
    assert repr(pipe.min) == "1" and repr(pipe.extent) == "8"
    assert pipe.annotations == {"num_stages": 2, "cross_interval": 2, "order": [0, 1, 2], "stage": [0, 0, 1]}


def test_loop_argument_errors():
    def bad(make):
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            with T.Kernel(1):
                for i in make():
                    A[i] = 0.0
        return k
    with pytest.raises(ValueError, match="num_stages must be >= 0"):
        bad(lambda: T.Pipelined(4, num_stages=-1))
    with pytest.raises(ValueError, match="order has 2 entries but stage has 3"):
        bad(lambda: T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 0, 1]))
    with pytest.raises(ValueError, match="step must not be 0"):
        bad(lambda: T.serial(0, 4, 0))
    with pytest.raises(TypeError, match="T.serial stop must be an integer"):
        bad(lambda: T.serial(2.5))
    with pytest.raises(ValueError, match="group_size must be >= 1"):
        bad(lambda: T.Persistent([4], 2, 0, group_size=0))


def test_kernel_forms():
    @T.prim_func
    def k3(A: T.Tensor((8,), "float32")):
        with T.Kernel(2, 3, 4, threads=[32, 2, 2], prelude="#define X 1") as (bx, by, bz):
            tx, ty, tz = T.get_thread_bindings()
            A[0] = T.cast(bx + by + bz + tx + ty + tz + T.get_thread_extent(1) + T.get_block_extent(2), "float32")
    kern = k3.body
    assert [g.value for g in kern.grid] == [2, 3, 4] and [t.value for t in kern.threads] == [32, 2, 2]
    assert [v.name for v in kern.thread_vars] == ["tx", "ty", "tz"] and kern.attrs == {"prelude": "#define X 1"}
    assert "A[0] = cast<float32>(bx + by + bz + tx + ty + tz + 2 + 4)" in k3.script()

    @T.prim_func
    def k0(A: T.Tensor((8,), "float32")):
        with T.Kernel(threads=64):
            A[T.get_thread_binding()] = T.cast(T.get_warp_idx() + T.get_lane_idx() + T.get_block_binding(), "float32")
    kern = k0.body
    assert [g.value for g in kern.grid] == [1] and [t.value for t in kern.threads] == [64]
    assert "A[tx] = cast<float32>(floordiv(tx, 32) + floormod(tx, 32) + bx)" in k0.script()

    @T.prim_func
    def kd(A: T.Tensor((8,), "float32")):
        with T.Kernel(4) as pid:
            A[pid] = 0.0
    assert [t.value for t in kd.body.threads] == [128]   # TileLang's default block size
    assert kd.body.block_vars[0].name == "pid"


def test_kernel_errors():
    with pytest.raises(TileLangSyntaxError, match="T.Kernel cannot be nested"):
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            with T.Kernel(1):
                with T.Kernel(2):
                    A[0] = 0.0
    with pytest.raises(ValueError, match="grid extent 0 must be positive"):
        @T.prim_func
        def k2(A: T.Tensor((8,), "float32")):
            with T.Kernel(0):
                A[0] = 0.0
    with pytest.raises(TileLangSyntaxError, match="2 grid dimension.* unpacks 3 names"):
        @T.prim_func
        def k3(A: T.Tensor((8,), "float32")):
            with T.Kernel(2, 2) as (a, b, c):
                A[0] = 0.0
    with pytest.raises(TileLangSyntaxError, match="get_thread_binding must be inside a `with T.Kernel"):
        @T.prim_func
        def k4(A: T.Tensor((8,), "float32")):
            A[T.get_thread_binding()] = 0.0
