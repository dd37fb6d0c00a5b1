"""Bad kernels: each raises a typed error naming the culprit and its file:line, and the frontend
keeps working afterwards."""
import os

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError, TileLangSyntaxError, VerifyError

HERE = os.path.abspath(__file__)


def line_of(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError(marker)


def at(marker, col=None):
    """The location prefix of an error at the line tagged `marker`."""
    return f"{HERE}:{line_of(marker)}:" + ("" if col is None else f"{col}:")


def good_kernel(n=64):
    @T.prim_func
    def ok(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 32), threads=32) as bx:
            for i in T.Parallel(32):
                B[bx * 32 + i] = A[bx * 32 + i] * 2.0
    return ok


def check(build, exc_type, marker, *fragments):
    with pytest.raises(exc_type) as info:
        build()
    msg = str(info.value)
    assert msg.startswith(at(marker)), msg
    for frag in fragments:
        assert frag in msg, msg
    # The frontend is still usable after the error.
    assert "B[bx * 32 + i] = A[bx * 32 + i] * 2.0f32" in good_kernel().script()
    return msg


def test_while_else():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                i = T.alloc_var("int32", init=0)
                while A[i] > 0:  # bad-while
                    i += 1
                else:
                    A[0] = 1.0
    check(build, TileLangSyntaxError, "bad-while", "'while ... else' is not supported")


def test_try_except():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                try:  # bad-try
                    A[0] = 1.0
                except ValueError:
                    pass
    check(build, TileLangSyntaxError, "bad-try", "try/except is not supported")


def test_for_else():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                for i in T.serial(4):  # bad-for-else
                    A[i] = 1.0
                else:
                    A[0] = 2.0
    check(build, TileLangSyntaxError, "bad-for-else", "'for ... else' is not supported")


def test_nested_pipelined():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16, 16), "float32")):
            with T.Kernel(1):
                for i in T.Pipelined(4, num_stages=2):
                    for j in T.Pipelined(4, num_stages=2):  # bad-nested
                        A[i, j] = 1.0
    check(build, TileLangSyntaxError, "bad-nested", "nested T.Pipelined loops are not supported")


def test_with_of_an_unknown_object():
    import threading
    lock = threading.Lock()

    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                with lock:  # bad-with
                    A[0] = 1.0
    check(build, TileLangSyntaxError, "bad-with", "`with` of a lock object is not supported", "T.Kernel")


def test_comprehension_over_an_ir_loop():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                vals = [A[i] for i in T.serial(4)]  # bad-comprehension
                A[0] = vals[0]
    check(build, TileLangSyntaxError, "bad-comprehension", "T.serial can only be used as the iterable of a `for`")


def test_comprehension_over_a_run_time_range():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32"), n: T.int32):
            with T.Kernel(1):
                vals = [A[i] for i in range(n)]  # bad-comprehension-range
                A[0] = vals[0]
    check(build, TileLangSyntaxError, "bad-comprehension-range",
          "comprehension cannot iterate over range(...) with the run-time bound 'n'")


def test_global_nonlocal_del_yield():
    def build_global():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            global counter  # bad-global
            with T.Kernel(1):
                A[0] = 1.0
    check(build_global, TileLangSyntaxError, "bad-global", "'global' is not supported")

    def build_del():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                x = A[0]
                del x  # bad-del
    check(build_del, TileLangSyntaxError, "bad-del", "'del' is not supported")

    def build_yield():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                yield A[0]  # bad-yield
    check(build_yield, TileLangSyntaxError, "bad-yield", "'yield' is not supported")


def test_starred_assignment_target():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                first, *rest = 1, 2, 3  # bad-starred
    check(build, TileLangSyntaxError, "bad-starred", "starred assignment targets")


def test_run_time_value_used_as_a_python_bool():
    def clamp_to_zero(x):       # a plain Python helper, not a macro
        if x < 0:
            return 0.0
        return x

    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1, threads=16) as bx:
                i = T.get_thread_binding()
                A[i] = clamp_to_zero(A[i])  # bad-bool
    msg = check(build, TypeError, "bad-bool", "'A[tx] < 0.0f32' is a run-time value",
                "cannot be used as a Python bool")
    assert "T.if_then_else" in msg


def test_accumulating_into_an_immutable_binding():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                total = 0.0
                for i in T.serial(16):
                    total = total + A[i]  # bad-accumulate
                A[0] = total
    check(build, TileLangSyntaxError, "bad-accumulate", "'total' was assigned outside this loop/if",
          "T.alloc_var")


def test_break_in_a_parallel_loop():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                for i in T.Parallel(16):
                    if A[i] < 0:
                        break  # bad-break
    check(build, TileLangSyntaxError, "bad-break", "'break' is only allowed in serial loops", "T.Parallel")


def test_wrong_index_count_names_the_buffer():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16, 16), "float32")):
            with T.Kernel(1):
                A[3] = 1.0  # bad-index
    check(build, IndexError, "bad-index", "buffer 'A' (global float32) has 2 dimension(s) but was indexed with 1")


def test_out_of_bounds_constant_index():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16, 16), "float32")):
            with T.Kernel(1):
                S = T.alloc_shared((8, 8), "float32")
                S[8, 0] = 1.0  # bad-oob
    check(build, IndexError, "bad-oob", "index 8 is out of bounds for dimension 0 of buffer 'S' with size 8")


def test_tile_op_outside_a_kernel():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
            T.copy(A, B)  # bad-outside
    check(build, TileLangSyntaxError, "bad-outside", "T.copy must be inside a `with T.Kernel(...)` block")


def test_undefined_name_keeps_its_type():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                A[0] = undefined_scale * 2.0  # noqa: F821  # bad-name
    check(build, NameError, "bad-name", "name 'undefined_scale' is not defined")


def test_error_inside_a_macro_names_both_locations():
    @T.macro
    def scale_row(buf, row, factor):
        for j in T.Parallel(16):
            buf[row, j] = buf[row, j] * factor[0, 0]  # bad-macro-line

    def build():
        @T.prim_func
        def k(A: T.Tensor((16, 16), "float32")):
            with T.Kernel(1):
                scale_row(A, 0, 2.0)  # bad-macro-call
    msg = check(build, TypeError, "bad-macro-line", "in macro 'scale_row'")
    assert f"called from {at('bad-macro-call')}" in msg


def test_return_value_from_prim_func():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32")):
            with T.Kernel(1):
                return A[0]  # bad-return
    check(build, TileLangSyntaxError, "bad-return", "cannot return a value", "out_idx")


def test_gemm_with_a_bad_policy_and_operands():
    def build():
        @T.prim_func
        def k(A: T.Tensor((64, 64), "float16")):
            with T.Kernel(1, threads=128):
                S = T.alloc_shared((64, 64), "float16")
                C = T.alloc_fragment((64, 64), "float32")
                T.gemm(S, S, C, policy="Diagonal")  # bad-policy
    check(build, ValueError, "bad-policy", "T.gemm: policy must be a GemmWarpPolicy", "'Diagonal'")


def test_missing_parameter_annotation():
    def build():
        @T.prim_func
        def k(A, n: T.int32):  # bad-annotation
            pass
    check(build, TileLangSyntaxError, "bad-annotation", "parameter 'A' of 'k' has no annotation", "T.Tensor")


def test_unknown_dtype_in_an_annotation():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float33")):  # bad-dtype
            pass
    check(build, ValueError, "bad-dtype", "unknown dtype 'float33'", "float16")


def test_kernel_without_python_source():
    src = ("@T.prim_func\n"
           "def k(A: T.Tensor((4,), 'float32')):\n"
           "    pass\n")
    with pytest.raises(TileLangSyntaxError, match="cannot read the Python source of 'k'.*define the kernel in a "
                                                  r"\.py file"):
        exec(compile(src, "<generated>", "exec"), {"T": T})
    assert good_kernel(32).name == "ok"


def test_all_frontend_errors_are_typed():
    assert issubclass(TileLangSyntaxError, TileLangError)
    assert tilelang.TileLangSyntaxError is TileLangSyntaxError


def test_return_inside_a_run_time_if():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32"), n: T.int32):
            with T.Kernel(1):
                if n > 3:
                    return  # bad-early-return
                A[0] = 1.0
    check(build, TileLangSyntaxError, "bad-early-return", "`return` inside a run-time if or loop")


def test_name_bound_in_a_branch_and_used_after_it():
    def build():
        @T.prim_func
        def k(A: T.Tensor((16,), "float32"), n: T.int32):
            with T.Kernel(1):
                if n > 2:
                    x = A[0] * 2
                else:
                    x = A[1]
                A[2] = x  # bad-scope
    check(build, VerifyError, "bad-scope", "variable 'x' (float32) is used outside any scope that defines it",
          "T.alloc_var")
