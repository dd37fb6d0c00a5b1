"""Errors that name their real cause: a misconfigured environment (a cache directory that looks like
an option, a wrong TILELANG_INCLUDE_DIR, an unwritable IR dump directory, a bad compiler flag) is not
reported as a bug in tilelang's code generation; a recursive kernel or macro is a syntax error at the
call; an Ascend tile op over two element types is a type error at its line."""
import atexit
import os
import shutil
import tempfile

import numpy as np
import pytest

import tilelang
import tilelang.language as T

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)

HERE = os.path.abspath(__file__)


def line_of(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError(marker)


def triple():
    @T.prim_func
    def k(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8) as bx:
            for i in T.Parallel(8):
                B[i] = A[i] * 3
    return k


def works(**kw):
    k = tilelang.compile(triple(), out_idx=[1], target="cpu", **kw)
    a = np.random.default_rng(5).standard_normal(8).astype(np.float32)
    np.testing.assert_allclose(k(a), a * 3, rtol=1e-6)
    return k


def test_cache_directory_that_looks_like_an_option(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TILELANG_CACHE_DIR", "-o-looks-like-an-option")
    assert tilelang.cache.cache_dir() == str(tmp_path / "-o-looks-like-an-option")
    tilelang.cache.clear_cache()
    k = works()
    assert k.artifact_dir.startswith(str(tmp_path) + "/-o-looks-like-an-option/")


def test_bogus_include_dir_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_INCLUDE_DIR", str(tmp_path / "nowhere"))
    tilelang.cache.clear_cache()
    with pytest.raises(ValueError) as info:
        works()
    message = str(info.value)
    assert "TILELANG_INCLUDE_DIR=" in message and "nowhere" in message and "tl/cpu" in message
    assert "code generation" not in message


def test_compiler_failure_outside_the_generated_code_does_not_blame_codegen():
    tilelang.cache.clear_cache()
    with pytest.raises(tilelang.CompileError) as info:
        works(compile_flags=["-fno-such-flag-tilelang"])
    message = str(info.value)
    assert "did not get to the generated code" in message and "compile_flags" in message
    assert "bug in tilelang's code generation" not in message
    assert "-fno-such-flag-tilelang" in message


@pytest.mark.parametrize("setting", ["env", "pass_config"])
def test_unwritable_ir_dump_directory_is_named(tmp_path, monkeypatch, setting):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    target = str(blocker / "dumps")
    tilelang.cache.clear_cache()
    if setting == "env":
        monkeypatch.setenv("TL_DUMP_IR", target)
        with pytest.raises(ValueError, match="TL_DUMP_IR = '.*a_file/dumps': cannot create the IR dump directory"):
            works()
    else:
        with pytest.raises(ValueError, match="pass config tl.dump_ir_path = '.*': cannot create"):
            works(pass_configs={"tl.enable_dump_ir": True, "tl.dump_ir_path": target})


def test_ir_dump_file_names_are_not_paths(tmp_path, monkeypatch):
    """A kernel's name is user text: it never leaves the dump directory."""
    def k(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1) as bx:
            for i in T.Parallel(8):
                B[i] = A[i] + 1
    k.__name__ = "../../escaped"
    dump = tmp_path / "dumps"
    monkeypatch.setenv("TL_DUMP_IR", str(dump))
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    tilelang.compile(T.prim_func(k), out_idx=[1], target="cpu")
    files = os.listdir(dump)
    assert files and all("/" not in f and not f.startswith(".") for f in files)
    assert not any(p.name.endswith(".tir") for p in tmp_path.iterdir())


def test_recursive_kernel_is_a_syntax_error_at_the_call():
    with pytest.raises(tilelang.TileLangSyntaxError) as info:
        @T.prim_func
        def again(A: T.Tensor((4,), "float32")):
            with T.Kernel(1) as bx:
                again(A)  # recursive-kernel
    message = str(info.value)
    assert f"{HERE}:{line_of('recursive-kernel')}:" in message and "kernel 'again' calls itself" in message


@T.macro
def forever(A, n):
    A[0] = A[0] + 1.0
    forever(A, n + 1)  # recursive-macro


@T.macro
def bounded(A, n):
    if n > 0:
        A[0] = A[0] + 1.0
        bounded(A, n - 1)


def test_unbounded_macro_recursion_is_a_syntax_error_at_the_call():
    with pytest.raises(tilelang.TileLangSyntaxError) as info:
        @T.prim_func
        def k(A: T.Tensor((4,), "float32")):
            with T.Kernel(1) as bx:
                forever(A, 0)
    message = str(info.value)
    assert f"{HERE}:{line_of('recursive-macro')}:" in message
    assert "macro 'forever' is expanded recursively 64 levels deep" in message
    assert "KeyError" not in message


def test_macro_recursion_with_a_compile_time_base_case_expands():
    @T.prim_func
    def k(A: T.Tensor((4,), "float32")):
        with T.Kernel(1) as bx:
            bounded(A, 7)
    kernel = tilelang.compile(k, target="cpu")
    a = np.zeros(4, np.float32)
    kernel(a)
    assert a.tolist() == [7.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("a_dtype,b_dtype,bad", [("int8", "float16", "a"), ("float16", "int8", "b"),
                                                  ("float32", "float16", "a")])
def test_ascend_tile_binary_op_needs_one_dtype(a_dtype, b_dtype, bad):
    with pytest.raises(TypeError) as info:
        @T.prim_func
        def k(A: T.Tensor((64,), a_dtype), B: T.Tensor((64,), b_dtype), C: T.Tensor((64,), "float16")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                a = T.alloc_ub((64,), a_dtype)
                b = T.alloc_ub((64,), b_dtype)
                c = T.alloc_ub((64,), "float16")
                T.copy(A, a)
                T.copy(B, b)
                with T.Scope("V"):
                    T.tile.add(c, a, b)  # mixed-add
                T.copy(c, C)
        tilelang.compile(k, target="ascend")
    message = str(info.value)
    assert f"{HERE}:{line_of('mixed-add')}:" in message
    assert f"operand {bad} '{bad}'" in message and "must share one dtype" in message and "T.tile.cast" in message


def test_ascend_tile_unary_op_needs_one_dtype():
    with pytest.raises(TypeError, match="operand src 'a' is int8 but dst 'c' is float16"):
        @T.prim_func
        def k(A: T.Tensor((64,), "int8"), C: T.Tensor((64,), "float16")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                a = T.alloc_ub((64,), "int8")
                c = T.alloc_ub((64,), "float16")
                T.copy(A, a)
                with T.Scope("V"):
                    T.tile.abs(c, a)
                T.copy(c, C)
        tilelang.compile(k, target="ascend")


def int_tile_scalar_kernel(op, dtype, scalar):
    @T.prim_func
    def k(A: T.Tensor((64,), dtype), C: T.Tensor((64,), dtype)):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((32,), dtype)
            c = T.alloc_ub((32,), dtype)
            T.copy(A[vid * 32], a)
            with T.Scope("V"):
                op(c, a, scalar)  # int-tile-scalar
            T.copy(c, C[vid * 32])
    return k


@pytest.mark.parametrize("name,dtype,scalar", [("add", "int8", 2.5), ("mul", "int32", 2.5), ("max", "int16", -0.5),
                                               ("sub", "uint8", 1e-3)])
def test_ascend_integer_tile_with_a_fractional_scalar_is_a_type_error(name, dtype, scalar):
    """An Ascend vector-scalar instruction takes the scalar as the tile's type: int8 x + 2.5 would be
    x + 2 on the hardware; tilelang neither rounds silently nor computes in float."""
    with pytest.raises(TypeError) as info:
        tilelang.compile(int_tile_scalar_kernel(getattr(T.tile, name), dtype, scalar), target="ascend")
    message = str(info.value)
    assert f"{HERE}:{line_of('int-tile-scalar')}:" in message and f"T.tile.{name}: " in message, message
    assert f"the scalar operand {scalar:g} is not a whole number but dst 'c' is {dtype}" in message, message


@pytest.mark.parametrize("name,scalar,expect", [("add", 2.0, lambda x: x + 2), ("mul", 3, lambda x: x * 3),
                                                ("add", -4.0, lambda x: x - 4)])
def test_ascend_integer_tile_with_a_whole_scalar_computes_exactly(name, scalar, expect):
    k = tilelang.compile(int_tile_scalar_kernel(getattr(T.tile, name), "int32", scalar), target="ascend")
    x = np.random.default_rng(3).integers(-1000, 1000, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    k(x, out)
    np.testing.assert_array_equal(out, expect(x.astype(np.int64)))


@pytest.mark.parametrize("where", ["func_attr", "pass_configs"])
def test_int_attribute_that_does_not_fit_64_bits_is_a_value_error_naming_the_key(where):
    def make(attrs):
        @T.prim_func
        def k(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
            T.func_attr(attrs)  # huge-attr
            with T.Kernel(1, threads=8) as bx:
                for i in T.Parallel(8):
                    B[i] = A[i] * 3
        return k
    if where == "func_attr":
        with pytest.raises(ValueError) as info:
            make({"my_attr": 10 ** 100})
        message = str(info.value)
        assert f"{HERE}:{line_of('huge-attr')}:" in message, message
        assert "the value of attribute 'my_attr' is 1000" in message and "(101 digits)" in message, message
    else:
        with pytest.raises(ValueError) as info:
            tilelang.compile(make({}), target="cpu", pass_configs={"tl.config_index_bitwidth": 2 ** 70})
        message = str(info.value)
        assert f"pass config 'tl.config_index_bitwidth' is {2 ** 70}" in message, message
    assert "does not fit in a signed 64-bit integer" in message and "bad_cast" not in message


@pytest.mark.parametrize("setting", ["env", "pass_config"])
def test_ir_dump_path_the_file_system_refuses_is_named(tmp_path, monkeypatch, setting):
    """A path component longer than NAME_MAX (255 bytes): a ValueError naming the setting, not a bare
    filesystem error."""
    target = str(tmp_path / ("c" * 300) / "dumps")
    tilelang.cache.clear_cache()
    if setting == "env":
        monkeypatch.setenv("TL_DUMP_IR", target)
        with pytest.raises(ValueError, match=r"TL_DUMP_IR = '.*c{300}/dumps': cannot create the IR dump directory "
                                             r"\(File name too long\)"):
            works()
    else:
        with pytest.raises(ValueError, match=r"pass config tl.dump_ir_path = '.*c{300}/dumps': cannot create .*too long"):
            works(pass_configs={"tl.enable_dump_ir": True, "tl.dump_ir_path": target})


@pytest.mark.parametrize("damage", ["empty_headers", "other_version"])
def test_include_dir_with_headers_that_are_not_this_tilelangs_is_named(tmp_path, monkeypatch, damage):
    """A stale install or foreign headers under TILELANG_INCLUDE_DIR: a ValueError naming the
    variable (tl/version.h), not a compile error blamed on tilelang's code generation."""
    inc = tmp_path / "inc"
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "include"), inc)
    if damage == "empty_headers":
        for path in (inc / "tl").rglob("*.h"):
            path.write_text("")
        os.remove(inc / "tl" / "version.h")
        why = "it has no tl/version.h"
    else:
        (inc / "tl" / "version.h").write_text('#pragma once\n#define TL_HEADERS_VERSION "0.0.1"\n')
        why = f"its headers are tilelang 0.0.1's (tl/version.h), but this is tilelang {tilelang.__version__}"
    monkeypatch.setenv("TILELANG_INCLUDE_DIR", str(inc))
    tilelang.cache.clear_cache()
    with pytest.raises(ValueError) as info:
        works()
    message = str(info.value)
    assert f"TILELANG_INCLUDE_DIR='{inc}' does not hold this tilelang's headers: {why}" in message, message
    assert "code generation" not in message
