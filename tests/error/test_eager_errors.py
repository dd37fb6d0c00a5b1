"""Errors of the eager @tilelang.jit style and of TileLang's module-level surface: each is a typed
exception that names the culprit (and, for kernel code, its file:line)."""
import os

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError

HERE = os.path.abspath(__file__)


def line_of(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError(marker)


@tilelang.jit
def vadd(A, B, BLOCK: int = 32):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=32) as bx:
        for i in T.Parallel(BLOCK):
            C[bx * BLOCK + i] = A[bx * BLOCK + i] + B[bx * BLOCK + i]
    return C


def test_const_without_a_value():
    with pytest.raises(TypeError, match=r"no value for T.const 'N': pass it as a keyword argument \(N=...\)"):
        vadd.compile()


def test_missing_tensor_and_unknown_keyword():
    a = np.zeros(64, np.float32)
    with pytest.raises(TypeError, match=r"missing tensor argument\(s\) B; to compile without running, call "
                                        r"vadd.compile"):
        vadd(a)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        vadd(a, a, NN=3)
    with pytest.raises(TypeError, match="multiple values for argument 'BLOCK'"):
        vadd(a, a, 32, BLOCK=32)


def test_shape_mismatch_is_an_argument_error():
    with pytest.raises(tilelang.ArgumentError, match="B"):
        vadd(np.zeros(64, np.float32), np.zeros(32, np.float32))


def test_const_outside_an_eager_function():
    with pytest.raises(TileLangSyntaxError, match="eager-style @tilelang.jit"):
        T.const("N")

    def build():
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            M = T.const("M")  # const-in-prim-func
            with T.Kernel(1):
                A[0] = M
    with pytest.raises(TileLangSyntaxError) as info:
        build()
    assert str(info.value).startswith(f"{HERE}:{line_of('const-in-prim-func')}:")


def test_output_not_returned_and_bad_return():
    @tilelang.jit
    def forgets(A):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B = T.empty((N,), T.float32)  # never-returned
        with T.Kernel(1, threads=32):
            B[0] = A[0]

    with pytest.raises(TileLangSyntaxError, match="never returned; end 'forgets' with `return B`"):
        forgets(np.zeros(4, np.float32))

    @tilelang.jit
    def returns_input(A):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        with T.Kernel(1, threads=32):
            A[0] = 1.0
        return A  # bad-return

    with pytest.raises(TileLangSyntaxError, match="other than the tensors it made with T.empty") as info:
        returns_input(np.zeros(4, np.float32))
    assert str(info.value).startswith(f"{HERE}:{line_of('bad-return')}:")


def test_out_idx_with_an_eager_function():
    with pytest.raises(ValueError, match="declares its outputs with T.empty"):
        @tilelang.jit(out_idx=[-1])
        def f(A):
            N = T.const("N")
            A: T.Tensor((N,), T.float32)
            B = T.empty((N,), T.float32)
            with T.Kernel(1, threads=32):
                B[0] = A[0]
            return B


def test_parameter_used_before_its_declaration():
    @tilelang.jit
    def early(A):
        n = A.shape  # before-declaration
        A: T.Tensor((8,), T.float32)
        with T.Kernel(1, threads=8):
            A[0] = 1.0

    with pytest.raises(TileLangSyntaxError, match="parameter 'A' is used before its declaration"):
        early.compile()


def test_t_empty_inside_the_kernel():
    def build():
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8):
                B = T.empty((8,), "float32")  # empty-in-kernel
                B[0] = A[0]
            return B
    with pytest.raises(TileLangSyntaxError, match="outside `with T.Kernel`") as info:
        build()
    assert str(info.value).startswith(f"{HERE}:{line_of('empty-in-kernel')}:")


def test_ref_parameter_given_a_python_value():
    @T.macro
    def setter(x: T.Ref):
        x = 1.0

    def build():
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8):
                setter(3)  # ref-int
    with pytest.raises(ValueError, match="annotated T.Ref: pass a T.alloc_var variable or a buffer element") as info:
        build()
    assert str(info.value).startswith(f"{HERE}:{line_of('ref-int')}:")


def test_unknown_pass_config_and_unsupported_tvm_api():
    with pytest.raises(ValueError, match="unknown pass config"):
        tilelang.compile(vadd.get_tir(N=32), pass_configs={"tl.not_a_key": True})
    from tilelang import tvm
    with pytest.raises(NotImplementedError, match="tvm.IRModule is part of TVM"):
        tvm.IRModule({})
    with pytest.raises(NotImplementedError, match="TensorCoreIntrinEmitter"):
        from tilelang.cuda.intrinsics.macro.wgmma_macro_generator import TensorCoreIntrinEmitter
        TensorCoreIntrinEmitter()
    with pytest.raises(ValueError, match="do_bench backend"):
        vadd.compile(N=32).get_profiler().do_bench(backend="nsys")
