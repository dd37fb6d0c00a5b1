"""The parser: compile-time vs run-time evaluation, control flow, bindings, macros, spans."""
import os

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from frontend_ir_eval import find, tile_ops
from tilelang.errors import TileLangSyntaxError

HERE = os.path.abspath(__file__)
GLOBAL_BLOCK = 32


def line_of(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker) and "line_of" not in text:
                return n
    raise AssertionError(marker)


def script_lines(func):
    return [ln.strip() for ln in func.script().splitlines()]


def test_compile_time_if_is_resolved_at_parse_time():
    def build(flag, n):
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                if flag and n > 2:
                    A[0] = 1.0
                elif n == 2:
                    A[0] = 2.0
                else:
                    A[0] = 3.0
                if not flag:
                    A[1] = 4.0
        return k
    assert [s.value.value for s in find(build(True, 3).body, lambda s: s.kind == "store")] == [1.0]
    assert [s.value.value for s in find(build(True, 2).body, lambda s: s.kind == "store")] == [2.0]
    assert [s.value.value for s in find(build(False, 5).body, lambda s: s.kind == "store")] == [3.0, 4.0]
    assert find(build(True, 3).body, lambda s: s.kind == "if") == []


def test_run_time_if_elif_else_becomes_ir():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), n: T.int32):
        with T.Kernel(1, threads=32) as bx:
            if n > 4:
                A[0] = 1.0
            elif n > 2:
                A[0] = 2.0
            else:
                A[0] = 3.0
    L = script_lines(k)
    assert L[2:11] == ["if (n > 4) {", "A[0] = 1.0f32", "} else {", "if (n > 2) {", "A[0] = 2.0f32",
                       "} else {", "A[0] = 3.0f32", "}", "}"]


def test_logical_operators_and_chained_comparisons():
    unused = None

    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), n: T.int32):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            if tx < n and A[tx] > 0 or not (tx == 3):
                A[tx] = 0.0
            if 0 <= tx < n <= 64:
                A[tx] = 1.0
            # short-circuit on compile-time values: `unused.foo` is never evaluated
            if unused is not None and unused.foo:
                A[0] = 2.0
            if unused is None or unused.foo:
                A[1] = 3.0
            A[2] = T.if_then_else(tx > 1, 1.0, 2.0) + (4.0 if n > 0 else 5.0) + (6.0 if GLOBAL_BLOCK else 7.0)
    L = script_lines(k)
    assert "if (tx < n && A[tx] > 0.0f32 || !(tx == 3)) {" in L
    assert "if (tx >= 0 && tx < n && n <= 64) {" in L
    assert "A[1] = 3.0f32" in L and "A[0] = 2.0f32" not in L
    assert "A[2] = select(tx > 1, 1.0f32, 2.0f32) + select(n > 0, 4.0f32, 5.0f32) + 6.0f32" in L


def test_let_bindings_and_snapshot_semantics():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            old = A[0]
            A[0] = old + 1.0
            A[1] = old
            twice = old * 2
            twice = twice + 1.0
            scale = 0.5
            A[2] = twice * scale
            i, j = 3, bx
            A[i + j] = 1.0
    L = script_lines(k)
    assert L[2:9] == ["let old: float32 = A[0]", "A[0] = old + 1.0f32", "A[1] = old",
                      "let twice: float32 = old * 2.0f32", "let twice_1: float32 = twice + 1.0f32",
                      "A[2] = twice_1 * 0.5f32", "A[3 + bx] = 1.0f32"]


def test_alloc_var_reads_and_stores():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), n: T.int32):
        with T.Kernel(1, threads=1) as bx:
            acc = T.alloc_var("float32", init=0)
            cnt = T.alloc_var(T.int32)
            cnt = 0
            for i in T.serial(n):
                acc += A[i]
                cnt = cnt + 1
                if acc > 8.0:
                    acc = acc * 0.5
            A[0] = acc / cnt
            A[1] = acc[0]
    L = script_lines(k)
    assert "alloc acc: local.var float32[1]" in L and "acc[0] = 0.0f32" in L
    assert "alloc cnt: local.var int32[1]" in L and "cnt[0] = 0" in L
    assert "acc[0] = acc[0] + A[i]" in L
    assert "cnt[0] = cnt[0] + 1" in L
    assert "if (acc[0] > 8.0f32) {" in L and "acc[0] = acc[0] * 0.5f32" in L
    assert "A[0] = acc[0] / cast<float32>(cnt[0])" in L
    assert "A[1] = acc[0]" in L


def test_augmented_assignment_on_buffer_elements_and_python_values():
    @T.prim_func
    def k(A: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=8) as bx:
            s = T.alloc_shared((8, 8), "float32")
            total = 0
            for c in [1, 2, 3]:
                total += c
            for i, j in T.Parallel(8, 8):
                s[i, j] += A[i, j] * total
                s[i, j] //= 2
    L = script_lines(k)
    assert "s[i, j] = s[i, j] + A[i, j] * 6.0f32" in L
    assert "s[i, j] = floor(s[i, j] / 2.0f32)" in L


def test_annotated_assignment():
    @T.prim_func
    def k(A: T.Tensor((8,), "float16"), n: T.int32):
        with T.Kernel(1, threads=8) as bx:
            x: T.float32 = A[0]
            y: T.int64 = 5
            A[1] = x + y + n
    L = script_lines(k)
    assert "let x: float32 = cast<float32>(A[0])" in L
    assert "A[1] = cast<float16>(x + 5.0f32 + cast<float32>(n))" in L


def test_macros_take_buffers_and_return_values():
    @T.macro
    def load_scaled(src, dst, scale, offset=0):
        for i in T.Parallel(16):
            dst[i] = src[i + offset] * scale
        return dst[0] + dst[15]

    @T.macro
    def twice(x):
        return load_scaled.func.__name__, x * 2   # plain Python values come back too

    @T.prim_func
    def k(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=16) as bx:
            f = T.alloc_fragment((16,), "float32")
            ends = load_scaled(A, f, 2.0, offset=16)
            name, v = twice(ends)
            B[0] = v
            load_scaled(A, f, 0.5)
    L = script_lines(k)
    assert "f[i] = A[i + 16] * 2.0f32" in L
    assert "let ends: float32 = f[0] + f[15]" in L
    assert "let v: float32 = ends * 2.0f32" in L
    assert "f[i] = A[i] * 0.5f32" in L
    with pytest.raises(TileLangSyntaxError, match="macro 'twice' can only be called while a @T.prim_func"):
        twice(1)


def test_macro_assigning_an_alloc_var_parameter_stores_into_it():
    @T.macro
    def bump(counter, by):
        counter = counter + by
        counter += 1

    @T.prim_func
    def k(A: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            c = T.alloc_var("int32", init=0)
            bump(c, 3)
            A[0] = c
    L = script_lines(k)
    assert "c[0] = c[0] + 3" in L and "c[0] = c[0] + 1" in L and "A[0] = c[0]" in L


def test_break_and_continue():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), n: T.int32):
        with T.Kernel(1, threads=1) as bx:
            for i in range(n):
                if A[i] < 0:
                    break
                if A[i] == 0:
                    continue
                A[i] = 1.0 / A[i]
            for c in [0, 1, 2, 3]:          # compile-time loop: Python's break
                if c == 2:
                    break
                A[c] = 0.0
            for i in T.serial(4):
                T.loop_break()
    L = script_lines(k)
    assert L[2:12] == ["for i: int32 in serial(0, n) {", "if (A[i] < 0.0f32) {", "break", "}",
                       "if (A[i] == 0.0f32) {", "continue", "}", "A[i] = 1.0f32 / A[i]", "}", "A[0] = 0.0f32"]
    assert "A[1] = 0.0f32" in L and "A[2] = 0.0f32" not in L
    assert find(k.body, lambda s: s.kind == "loop_control")[-1].is_break is True


def test_compile_time_while_and_assert():
    n_steps = 3

    @T.prim_func
    def k(A: T.Tensor((8,), "float32"), n: T.int32):
        with T.Kernel(1, threads=1) as bx:
            s = 1
            while s < 2 ** n_steps:
                A[s] = 1.0
                s *= 2
            assert n_steps == 3, "compile-time"
            assert n > 0, "n must be positive"
    L = script_lines(k)
    assert ["A[1] = 1.0f32", "A[2] = 1.0f32", "A[4] = 1.0f32"] == L[2:5]
    assert 'evaluate tl.device_assert<void>(n > 0, "n must be positive")' in L


def test_run_time_while_is_a_serial_loop_left_by_break():
    @T.prim_func
    def collatz(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=64):
            for i in T.serial(64):
                x = T.alloc_var("int32")
                n = T.alloc_var("int32", init=0)
                x = A[i]
                while x != 1:
                    if x % 2 == 0:
                        x = x // 2
                        continue  # re-tests the condition
                    x = 3 * x + 1
                    n += 1
                B[i] = n
    text = collatz.script()
    assert "in serial(0, 2147483647)" in text and "break" in text
    kernel = tilelang.compile(collatz, out_idx=[1], target="cpu")
    a = np.arange(1, 65, dtype=np.int32)

    def odd_steps(v):
        n = 0
        while v != 1:
            if v % 2 == 0:
                v //= 2
                continue
            v = 3 * v + 1
            n += 1
        return n

    np.testing.assert_array_equal(kernel(a), [odd_steps(int(v)) for v in a])


def test_macro_parameters_by_reference():
    @T.macro
    def bump(x: T.Ref, by):
        x = x + by
        x += 1

    @T.prim_func
    def k(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8):
            v = T.alloc_var("float32", init=0.0)
            bump(v, 2.0)       # an alloc_var: stores into it
            for i in T.serial(8):
                bump(A[i], v)  # a buffer element: stores into A[i]
                B[i] = A[i]
    assert "v[0] = v[0] + 2.0f32" in k.script() and "A[i] = A[i] + v[0]" in k.script()
    kernel = tilelang.compile(k, out_idx=[1], target="cpu")
    a = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(kernel(a.copy()), a + 3.0 + 1.0)

    def bad():
        @T.prim_func
        def k2(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8):
                bump(1.0, 2.0)
    with pytest.raises(ValueError, match="annotated T.Ref"):
        bad()


def test_spans_point_at_the_kernel_source():
    @T.prim_func
    def k(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as bx:  # span-kernel
            s = T.alloc_shared((16,), "float32")  # span-alloc
            T.copy(A, s)  # span-copy
            for i in T.Parallel(16):  # span-loop
                s[i] = s[i] * 2.0  # span-store
            T.copy(s, A)
    kern = k.body
    assert kern.span.file == HERE and kern.span.line == line_of("span-kernel") and kern.span.col == 9
    alloc = kern.body
    assert alloc.kind == "allocate" and alloc.span.line == line_of("span-alloc")
    assert alloc.buffer.span.line == line_of("span-alloc")
    copy = tile_ops(k, "copy")[0]
    assert copy.span.line == line_of("span-copy") and copy.span.col == 13
    loop = find(k.body, lambda s: s.kind == "for")[0]
    assert loop.span.line == line_of("span-loop")
    store = find(k.body, lambda s: s.kind == "store")[0]
    assert str(store.span) == f"{HERE}:{line_of('span-store')}:17"
    assert k.ir.span.line == line_of("span-kernel") - 1   # the def line


def test_closure_and_global_values_are_constants():
    def outer(block):
        def inner(scale):
            @T.prim_func
            def k(A: T.Tensor((block * GLOBAL_BLOCK,), "float32")):
                with T.Kernel(block, threads=GLOBAL_BLOCK) as bx:
                    for i in T.Parallel(GLOBAL_BLOCK):
                        A[bx * GLOBAL_BLOCK + i] = A[bx * GLOBAL_BLOCK + i] * scale
            return k
        return inner
    k = outer(4)(3.0)
    L = script_lines(k)
    assert L[0].startswith("func @k(A: global float32[128])")
    assert "A[bx * 32 + i] = A[bx * 32 + i] * 3.0f32" in L


def test_func_attr_and_global_symbol():
    @T.prim_func
    def my_kernel(A: T.Tensor((4,), "float32")):
        """Docstrings are ignored."""
        T.func_attr({"enable_auto_sync": True, "tag": "x"})
        with T.Kernel(1) as bx:
            A[0] = 0.0
    assert my_kernel.attrs == {"global_symbol": "my_kernel", "enable_auto_sync": True, "tag": "x"}
    assert my_kernel.name == "my_kernel"


def test_compile_time_python_runs_at_parse_time(capsys):
    @T.prim_func
    def k(A: T.Tensor((4,), "float32")):
        print("parsing", A.shape[0])
        with T.Kernel(1) as bx:
            vals = [float(v) for v in range(4)]
            for v in vals:
                A[int(v)] = v
    assert capsys.readouterr().out == "parsing 4\n"
    assert [s.value.value for s in find(k.body, lambda s: s.kind == "store")] == [0.0, 1.0, 2.0, 3.0]


def test_future_annotations_module():
    import frontend_future_kernels as m
    f = m.build(64)
    assert "func @k(A: global float16[64], m: int32)" in f.script()


def test_parse_cache_is_per_code_object():
    from tilelang.language import parser

    def build(n):
        @T.prim_func
        def k(A: T.Tensor((n,), "float32")):
            with T.Kernel(1) as bx:
                A[0] = 1.0
        return k
    build(4)
    size = len(parser._cache)
    build(8)
    build(16)
    assert len(parser._cache) == size


def test_parallel_parses_on_threads_are_independent():
    # The autotuner may build configurations from a thread pool.
    from concurrent.futures import ThreadPoolExecutor

    def build(n):
        @T.prim_func
        def k(A: T.Tensor((n,), "float32")):
            with T.Kernel(n // 16, threads=16) as bx:
                acc = T.alloc_var("float32", init=0)
                for i in T.serial(16):
                    acc += A[bx * 16 + i]
                A[bx * 16] = acc
        return n, k.script()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(build, [16 * (i + 1) for i in range(40)]))
    for n, text in results:
        assert f"A: global float32[{n}]" in text and f"grid=[{n // 16}]" in text
        assert text.count("acc[0] = acc[0] + A[bx * 16 + i]") == 1


def test_parameter_forms():
    m = T.symbolic("m")
    s0 = T.dynamic("s0", "int64")

    @T.prim_func
    def k(A: T.StridedTensor((m, 8), (s0, 1), "float16"), B: T.Buffer((m,), "float32"),
          C: T.Tensor[(4, 4), "int8"], x: T.float32, flag: T.bool, n: int):
        with T.Kernel(1):
            B[0] = x
    text = k.script()
    assert "func @k dyn[m: int32, s0: int64](A: global float16[m, 8] strides[s0, 1], B: global float32[m], " \
           "C: global int8[4, 4], x: float32, flag: bool, n: int32)" in text
    assert [p.name for p in k.params] == ["A", "B", "C", "x", "flag", "n"]
    assert [repr(e) for e in k.params[0].strides] == ["s0", "1"]


def test_return_leaves_kernel_and_macro_blocks():
    @T.macro
    def fill_or_skip(buf, skip):
        if skip:            # compile-time: an early return is plain Python
            return 0
        T.fill(buf, 1.0)
        return 1

    @T.prim_func
    def k(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as bx:
            s = T.alloc_shared((16,), "float32")
            done = fill_or_skip(s, True) + fill_or_skip(s, False)
            A[0] = done
            return                  # leaving the `with T.Kernel` block closes it
            A[1] = 2.0              # never parsed  # noqa: unreachable
    assert "A[0] = 1.0f32" in k.script() and "A[1]" not in k.script()
    assert [o.op for o in tile_ops(k)] == ["fill"]


def test_astype_is_a_cast():
    @T.prim_func
    def k(A: T.Tensor((4,), "float16"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=4):
            for i in T.Parallel(4):
                B[i] = A[i].astype(T.float32) * 2
    assert "B[i] = cast<float32>(A[i]) * 2.0f32" in k.script()
