"""@tilelang.jit, tilelang.compile and the Kernel object on the cpu target."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from rt_kernels import add_1d, gemm, gemm_ref, sum_and_diff, with_workspace


def test_compile_and_call_gemm(rng):
    kernel = tilelang.compile(gemm(128, 96, 64, 64, 32, 32), out_idx=[-1], target="cpu")
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((64, 96)).astype(np.float16)
    c = kernel(a, b)
    assert isinstance(c, np.ndarray) and c.shape == (128, 96) and c.dtype == np.float16
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, atol=2e-2, rtol=2e-2)


def test_jit_decorator_forms_and_memo(rng):
    calls = []

    @tilelang.jit(out_idx=[-1])
    def builder(N, block):
        calls.append((N, block))
        return add_1d(N, block)

    k1 = builder(512, 128)
    k2 = builder(512, 128)
    assert k1 is k2 and calls == [(512, 128)]  # the builder ran once
    k3 = builder(512, block=64)
    assert k3 is not k1 and len(calls) == 2
    a, b = rng.random(512, dtype=np.float32), rng.random(512, dtype=np.float32)
    np.testing.assert_array_equal(k3(a, b), a + b)

    @tilelang.jit
    def bare(N):
        return add_1d(N, 128)

    c = np.empty(256, np.float32)
    assert bare(256)(a[:256], b[:256], c) is None  # no out_idx: nothing returned, C written in place
    np.testing.assert_array_equal(c, a[:256] + b[:256])
    assert bare.__name__ == "bare"

    # Applied to a @T.prim_func directly, jit compiles it.
    k = tilelang.jit(out_idx=-1)(add_1d(256, 128))
    assert isinstance(k, tilelang.JITKernel)
    np.testing.assert_array_equal(k(a[:256], b[:256]), a[:256] + b[:256])


def test_out_idx_forms(rng):
    f = sum_and_diff(256)
    a, b = rng.random(256, dtype=np.float32), rng.random(256, dtype=np.float32)
    s, d = tilelang.compile(f, out_idx=[2, 3])(a, b)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(d, a - b)
    # Outputs come back in the order out_idx lists them.
    d2, s2 = tilelang.compile(f, out_idx=[-1, -2])(a, b)
    np.testing.assert_array_equal(d2, a - b)
    np.testing.assert_array_equal(s2, a + b)
    only_d = tilelang.compile(f, out_idx=3)
    s_given = np.zeros(256, np.float32)
    np.testing.assert_array_equal(only_d(a, b, s_given), a - b)
    np.testing.assert_array_equal(s_given, a + b)


def test_workspace_is_zero_filled_and_not_returned(rng):
    k = tilelang.compile(with_workspace(256), out_idx=[2], workspace_idx=[1])
    a = rng.random(256, dtype=np.float32)
    out = k(a)
    np.testing.assert_array_equal(out, a)  # W was all zeros
    np.testing.assert_array_equal(k(a), a)  # and is fresh on every call (the kernel wrote 7s)
    assert [p.role for p in k.params] == ["input", "workspace", "output"]


def test_kernel_introspection():
    k = tilelang.compile(gemm(64, 64, 64, 32, 32, 32), out_idx=[-1])
    src = k.get_kernel_source()
    assert "tl_kernel_entry" in src
    assert k.get_host_source() == ""  # host and kernel code are one C++ file on cpu
    assert str(k.target) == "cpu" and k.target == "cpu"
    assert [(p.name, p.dtype, p.shape) for p in k.params] == [
        ("A", "float16", (64, 64)), ("B", "float16", (64, 64)), ("C", "float16", (64, 64))]
    assert "gemm" in k.get_ir("input")
    final = k.get_ir()
    assert final.startswith("func @main") and "gemm(" not in final  # tile ops are lowered
    names = k.stage_names()
    assert "lower_tile_ops" in names
    assert "gemm(" not in k.get_ir("lower_tile_ops")
    with pytest.raises(ValueError, match="unknown IR stage 'nope'.*available stages"):
        k.get_ir("nope")
    assert "main" in repr(k)


def test_disk_cache_is_reused_by_another_process(tmp_path):
    script = f"""
import sys; sys.path.insert(0, {os.path.dirname(__file__)!r})
import numpy as np, tilelang
from rt_kernels import add_1d
k = tilelang.compile(add_1d(1024, 256), out_idx=[-1])
a = np.arange(1024, dtype=np.float32)
assert (k(a, a) == 2 * a).all()
print("HIT" if k.cache_hit else "MISS", k.artifact_dir)
"""
    env = dict(os.environ, TILELANG_CACHE_DIR=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert first.stdout.startswith("MISS") and second.stdout.startswith("HIT")
    entry = second.stdout.split()[1]
    assert entry.startswith(str(tmp_path)) and os.path.exists(os.path.join(entry, "MANIFEST"))

    # A corrupted entry is rebuilt, never loaded.
    with open(os.path.join(entry, "kernel.so"), "r+b") as f:
        f.seek(100)
        f.write(b"\x00garbage\x00")
    third = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr
    assert third.stdout.startswith("MISS")

    # TILELANG_DISABLE_CACHE=1: nothing is read or written.
    empty = tmp_path / "empty"
    env_off = dict(env, TILELANG_CACHE_DIR=str(empty), TILELANG_DISABLE_CACHE="1")
    off = subprocess.run([sys.executable, "-c", script], env=env_off, capture_output=True, text=True, timeout=300)
    assert off.returncode == 0, off.stderr
    assert off.stdout.startswith("MISS") and not empty.exists()


def test_cache_module(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    assert tilelang.cache.cache_dir() == str(tmp_path)
    tilelang.compile(add_1d(512, 256, "float16"), out_idx=[-1])
    assert tilelang.cache.clear_cache() == 1
    k = tilelang.compile(add_1d(512, 256, "float16"), out_idx=[-1])
    assert not k.cache_hit  # rebuilt after clearing (the in-process memo was cleared too)
    tilelang.cache.disable_cache()
    assert not tilelang.cache.is_cache_enabled()
    tilelang.cache.enable_cache()
    assert tilelang.cache.is_cache_enabled()


def test_pass_config_key_enum():
    K = tilelang.PassConfigKey
    expected = {
        "TL_ASCEND_AUTO_SYNC": "tl.ascend_auto_sync", "TL_ASCEND_MEMORY_PLANNING": "tl.ascend_memory_planning",
        "TL_ASCEND_AUTO_CV_COMBINE": "tl.ascend_auto_cv_combine",
        "TL_ASCEND_AUTO_CV_SYNC": "tl.ascend_auto_cross_core_sync",
        "TL_DISABLE_WARP_SPECIALIZED": "tl.disable_warp_specialized", "TL_DISABLE_TMA_LOWER": "tl.disable_tma_lower",
        "TL_ENABLE_FAST_MATH": "tl.enable_fast_math",
        "TL_DISABLE_THREAD_STORAGE_SYNC": "tl.disable_thread_storage_sync",
        "TL_DISABLE_SHARED_MEMORY_REUSE": "tl.disable_shared_memory_reuse",
        "TL_CONFIG_INDEX_BITWIDTH": "tl.config_index_bitwidth", "TL_DISABLE_VECTORIZE": "tir.disable_vectorize",
    }
    for member, value in expected.items():
        assert K[member].value == value and K[member] == value
    assert K("tl.cpu_num_threads") is K.TL_CPU_NUM_THREADS


def test_pass_configs_members_or_strings(rng):
    f = add_1d(1024, 128)
    k1 = tilelang.compile(f, out_idx=[-1], pass_configs={tilelang.PassConfigKey.TL_CPU_NUM_THREADS: 1,
                                                          "tl.enable_fast_math": True})
    assert k1.pass_configs == {"tl.cpu_num_threads": 1, "tl.enable_fast_math": True}
    assert k1.info()["num_threads"] == 1
    k2 = tilelang.compile(f, out_idx=[-1], pass_configs={"TL_DISABLE_VECTORIZE": True})  # member names too
    assert k2.pass_configs == {"tir.disable_vectorize": True}
    a, b = rng.random(1024, dtype=np.float32), rng.random(1024, dtype=np.float32)
    np.testing.assert_allclose(k1(a, b), a + b, rtol=1e-6)
    np.testing.assert_allclose(k2(a, b), a + b, rtol=1e-6)
    assert k1.cache_key != k2.cache_key


def test_compile_flags_and_execution_backend(rng):
    f = add_1d(256, 128)
    k1 = tilelang.compile(f, out_idx=[-1], compile_flags=["-DTL_TEST_FLAG=1"], execution_backend="cython")
    k2 = tilelang.compile(f, out_idx=[-1], compile_flags="-O3 -DTL_TEST_FLAG=2")
    k3 = tilelang.compile(f, out_idx=[-1])
    assert len({k1.cache_key, k2.cache_key, k3.cache_key}) == 3
    a = rng.random(256, dtype=np.float32)
    np.testing.assert_array_equal(k2(a, a), 2 * a)


def test_verbose_reports_the_compiler_command(capfd):
    tilelang.compile(add_1d(128, 64, "int32"), out_idx=[-1], verbose=True, compile_flags=["-DTL_VERBOSE_TEST"])
    err = capfd.readouterr().err
    assert "g++" in err and "-DTL_VERBOSE_TEST" in err and "compiled in" in err


def test_equal_functions_share_one_build():
    k1 = tilelang.compile(add_1d(2048, 256), out_idx=[-1])
    k2 = tilelang.compile(add_1d(2048, 256), out_idx=[-1])  # a new, equal function
    assert k1.cache_key == k2.cache_key
    assert k1.artifact_dir == k2.artifact_dir


def test_kernels_run_concurrently_from_threads(rng):
    import threading
    k = tilelang.compile(gemm(128, 128, 128, 32, 32, 32), out_idx=[-1])
    inputs = [(rng.standard_normal((128, 128)).astype(np.float16), rng.standard_normal((128, 128)).astype(np.float16))
              for _ in range(4)]
    results = [None] * 4

    def work(i):
        for _ in range(5):
            results[i] = k(*inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (a, b), c in zip(inputs, results):
        np.testing.assert_allclose(c.astype(np.float64), gemm_ref(a, b).astype(np.float64), atol=5e-2, rtol=2e-2)


def test_auto_target_without_gpu_is_cpu():
    if tilelang._core.cuda_available():
        pytest.skip("a CUDA device is visible")
    assert str(tilelang._core.resolve_target("auto")) == "cpu"
    assert tilelang.compile(add_1d(128, 64), target="auto").target == "cpu"
