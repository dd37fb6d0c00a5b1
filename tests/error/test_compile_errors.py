"""Bad compile requests: typed errors that name the option at fault and say what to change."""
import atexit
import os
import shutil
import tempfile

import pytest

import tilelang
import tilelang.language as T

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)


def add(n=64, dtype="float32"):
    @T.prim_func
    def k(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=n) as bx:
            for i in T.Parallel(n):
                B[i] = A[i] + 1
    return k


def works():
    import numpy as np
    k = tilelang.compile(add(), out_idx=[1])
    a = np.arange(64, dtype=np.float32)
    assert (k(a) == a + 1).all()


@pytest.mark.parametrize("target,pattern", [
    ("musa", "unknown target 'musa'"),
    ("cuda -arch=sm_70", "unsupported cuda architecture 'sm_70'"),
    ("ascend -model=A9", "unknown ascend model 'A9'"),
    ("cpu -mcpu=x", "unknown option '-mcpu=x'"),
])
def test_bad_targets(target, pattern):
    with pytest.raises(ValueError) as info:
        tilelang.compile(add(), target=target)
    assert pattern in str(info.value) and "supported targets" in str(info.value)
    works()


def test_target_of_wrong_type():
    with pytest.raises(ValueError, match="target must be a string"):
        tilelang.compile(add(), target=3)


@pytest.mark.parametrize("configs,pattern", [
    ({"tl.not_a_key": 1}, "unknown pass config 'tl.not_a_key'"),
    ({tilelang.PassConfigKey.TL_CONFIG_INDEX_BITWIDTH: 48}, "must be 32 or 64, got 48"),
    ({"tl.cpu_num_threads": "four"}, "pass config 'tl.cpu_num_threads' expects an int"),
    ({"tl.enable_fast_math": 2}, "pass config 'tl.enable_fast_math' expects a bool"),
    ({tilelang.PassConfigKey.TL_ASCEND_AUTO_CV_SYNC: True}, "requires TL_ASCEND_AUTO_CV_COMBINE"),
    ({3: True}, "pass config keys must be strings or tilelang.PassConfigKey members"),
    ([("tl.enable_fast_math", True)], "pass_configs must be a dict"),
])
def test_bad_pass_configs(configs, pattern):
    with pytest.raises(ValueError) as info:
        tilelang.compile(add(), pass_configs=configs)
    assert pattern in str(info.value)
    # The decorator checks them up front, before any kernel is built.
    with pytest.raises(ValueError):
        tilelang.jit(pass_configs=configs)
    works()


def test_negative_thread_count():
    with pytest.raises(ValueError, match="tl.cpu_num_threads' must be >= 0"):
        tilelang.compile(add(32), pass_configs={"tl.cpu_num_threads": -2})
    works()


def test_bad_compile_flag_is_compile_error_with_command_and_log():
    with pytest.raises(tilelang.CompileError) as info:
        tilelang.compile(add(), compile_flags=["-fno-such-flag-tilelang"])
    message = str(info.value)
    assert "command: g++" in message and "-fno-such-flag-tilelang" in message
    assert "compiler output:" in message and "error" in message
    works()


def test_missing_system_compiler(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/tl-c++")
    with pytest.raises(tilelang.CompileError, match="/nonexistent/tl-c\\+\\+.*set CXX to a working compiler"):
        tilelang.compile(add(16))
    monkeypatch.delenv("CXX")
    works()


def test_unusable_cache_directory(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(blocker))
    tilelang.cache.clear_cache()
    with pytest.raises(tilelang.TileLangError, match="TILELANG_CACHE_DIR"):
        tilelang.compile(add(8))
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    works()  # without the cache it compiles fine


def test_not_a_prim_func():
    with pytest.raises(TypeError, match="expected a @T.prim_func function, got function"):
        tilelang.compile(lambda: None)
    with pytest.raises(TypeError, match="@tilelang.jit expects a function"):
        tilelang.jit(out_idx=[1])(42)


def test_bad_options():
    with pytest.raises(ValueError, match="unknown execution_backend 'tvm'"):
        tilelang.compile(add(), execution_backend="tvm")
    with pytest.raises(ValueError, match="compile_flags must be a string or a list of strings"):
        tilelang.compile(add(), compile_flags=[1, 2])
    with pytest.raises(ValueError, match="workspace_idx entry 7 is out of range"):
        tilelang.compile(add(), workspace_idx=[7])
    with pytest.raises(ValueError, match="is in both out_idx and workspace_idx"):
        tilelang.compile(add(), out_idx=[1], workspace_idx=[1])
    works()


def test_cross_thread_accumulation_into_a_fragment_is_a_layout_error():
    """`r[i] += a[i, j]` in T.Parallel(M, N) spreads j over threads on cuda: each thread would keep a
    partial sum (a silently wrong result); the error names the buffer, the variable and the fix."""
    import tilelang.language as T
    from tilelang import _core

    @T.prim_func
    def acc(A: T.Tensor((64, 128), "float32"), O: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_fragment((64, 128), "float32")
            r = T.alloc_fragment((64,), "float32")
            T.copy(A, a)
            T.clear(r)
            for i, j in T.Parallel(64, 128):
                r[i] += a[i, j]
            T.copy(r, O)

    with pytest.raises(_core.LayoutError, match=r"test_compile_errors.py:\d+:\d+: T.Parallel stores into 'r' a value "
                                                r"that depends on 'j'.*T.alloc_reducer and call T.finalize_reducer"):
        _core.cuda.lower_func(acc.ir, "sm_80")
