"""Autotuning UX (issue 18): results saved in the cache directory and reused by the next run (unless
told not to), progress bars through tqdm when it is installed (nothing extra without it), parallel
compilation with a per-config timeout, and failed configs reported with their reason."""
import json
import os
import sys
import threading
import time
import types

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _core
from tilelang.autotuner import AutoTuner

BUILT = []  # the configs the builder was run for, in order


def scaled_copy(N, block=64, factor=2.0):
    BUILT.append(block)
    if block == 48:
        raise ValueError("block 48 does not divide the tile")

    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = A[bx * block + i] * factor
    return k


CONFIGS = [{"block": 32}, {"block": 48}, {"block": 64}, {"block": 128}]


def ref(a):
    return a * 2.0


def tuned(**options):
    """A fresh @autotune object over the same builder: what a new process would create."""
    AutoTuner._memory_cache.clear()
    return tilelang.autotune(configs=CONFIGS, warmup=1, rep=3, ref_prog=ref, verbose=False, **options)(
        tilelang.jit(out_idx=[1], target="cpu")(scaled_copy))


def saved_files():
    d = os.path.join(_core.cache_root(), "autotuner")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def test_results_are_saved_and_reused(monkeypatch):
    monkeypatch.delenv("TILELANG_AUTO_TUNING_DISABLE_CACHE", raising=False)
    before = set(saved_files())
    N = 1000 + len(before)  # a key no earlier test used
    BUILT.clear()
    first = tuned().get_tuner_result(N)
    assert sorted(BUILT) == [32, 48, 64, 128]  # every config built
    assert [r.status for r in first.results] == ["ok", "compile error", "ok", "ok"]
    assert "block 48 does not divide the tile" in first.results[1].message
    new = set(saved_files()) - before
    assert len(new) == 1
    record = json.load(open(os.path.join(_core.cache_root(), "autotuner", new.pop())))
    assert record["best_config"] == repr(first.config)

    # A new run with the same key builds only the best config and reports what the first run found.
    BUILT.clear()
    again = tuned().get_tuner_result(N)
    assert BUILT == [first.config["block"]]
    assert again.config == first.config and again.latency == first.latency
    assert [(r.status, r.message) for r in again.results] == [(r.status, r.message) for r in first.results]
    a = np.random.default_rng(3).standard_normal(N).astype(np.float32)
    np.testing.assert_allclose(again.kernel(a), a.astype(np.float64) * 2.0, rtol=1e-6)
    assert again.kernel.latency == first.latency

    # ignore_cache=True, TILELANG_AUTO_TUNING_DISABLE_CACHE=1 and other arguments tune anew.
    BUILT.clear()
    tuned(ignore_cache=True).get_tuner_result(N)
    assert sorted(BUILT) == [32, 48, 64, 128]
    monkeypatch.setenv("TILELANG_AUTO_TUNING_DISABLE_CACHE", "1")
    BUILT.clear()
    tuned().get_tuner_result(N)
    assert sorted(BUILT) == [32, 48, 64, 128]
    monkeypatch.delenv("TILELANG_AUTO_TUNING_DISABLE_CACHE")
    BUILT.clear()
    tuned().get_tuner_result(N + 1)
    assert sorted(BUILT) == [32, 48, 64, 128]


def test_a_changed_check_is_a_different_key():
    N = 2000 + len(saved_files())
    BUILT.clear()
    tuned().get_tuner_result(N)
    BUILT.clear()
    AutoTuner._memory_cache.clear()
    tilelang.autotune(configs=CONFIGS, warmup=1, rep=3, ref_prog=ref, atol=1e-3, verbose=False)(
        tilelang.jit(out_idx=[1], target="cpu")(scaled_copy)).get_tuner_result(N)
    assert sorted(BUILT) == [32, 48, 64, 128]


class FakeTqdm:
    bars = []

    def __init__(self, total=None, desc=None, file=None):
        self.total, self.desc, self.n, self.postfix, self.closed = total, desc, 0, {}, False
        FakeTqdm.bars.append(self)

    def update(self, n=1):
        self.n += n

    def set_postfix(self, post, refresh=True):
        self.postfix = dict(post)

    def close(self):
        self.closed = True


def test_progress_bars_with_tqdm(monkeypatch, capsys):
    mod = types.ModuleType("tqdm")
    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeTqdm
    mod.auto = auto
    monkeypatch.setitem(sys.modules, "tqdm", mod)
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    FakeTqdm.bars.clear()
    AutoTuner._memory_cache.clear()
    tilelang.autotune(configs=CONFIGS, warmup=1, rep=3, ref_prog=ref, ignore_cache=True)(
        tilelang.jit(out_idx=[1], target="cpu")(scaled_copy)).get_tuner_result(3000)
    compile_bar, tune_bar = FakeTqdm.bars
    assert compile_bar.desc == "Compiling scaled_copy" and compile_bar.total == 3 == compile_bar.n
    assert tune_bar.desc == "Tuning scaled_copy" and tune_bar.total == 3 == tune_bar.n
    assert compile_bar.closed and tune_bar.closed
    assert tune_bar.postfix["best"].endswith(" ms") and float(tune_bar.postfix["best"].split()[0]) > 0
    err = capsys.readouterr().err
    assert "skipped (compile error): ValueError: block 48 does not divide the tile" in err
    assert "best config" in err
    assert "autotune] config {'block': 32}: " not in err  # the bar shows the times


def test_without_tqdm_nothing_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    AutoTuner._memory_cache.clear()
    tuned(ignore_cache=True).get_tuner_result(3001)
    assert capsys.readouterr().err == ""  # verbose=False: quiet
    AutoTuner._memory_cache.clear()
    tilelang.autotune(configs=CONFIGS, warmup=1, rep=3, ref_prog=ref, ignore_cache=True)(
        tilelang.jit(out_idx=[1], target="cpu")(scaled_copy)).get_tuner_result(3002)
    err = capsys.readouterr().err
    assert "autotune] config {'block': 32}: " in err and "best config" in err  # one line per config instead


def test_parallel_compilation_and_per_config_timeout(monkeypatch):
    """Configs compile on TILELANG_AUTO_TUNING_CPU_COUNTS threads at once; one that compiles longer
    than `timeout` is reported as a timeout and the others still win."""
    monkeypatch.setenv("TILELANG_AUTO_TUNING_CPU_COUNTS", "4")
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    real = AutoTuner._compile

    def slow_compile(self, prim, config):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        try:
            time.sleep(4.0 if config["block"] == 128 else 0.3)
            return real(self, prim, config)
        finally:
            with lock:
                state["now"] -= 1

    monkeypatch.setattr(AutoTuner, "_compile", slow_compile)
    tuner = (AutoTuner.from_kernel(kernel=lambda block=64: scaled_copy(4096, block), configs=CONFIGS)
             .set_compile_args(out_idx=[1], target="cpu").set_profile_args(ref_prog=ref))
    tuner.verbose = False
    tuner.ignore_cache = True
    result = tuner.run(warmup=1, rep=3, timeout=2.0)
    statuses = {r.config["block"]: (r.status, r.message) for r in result.results}
    assert statuses[128] == ("timeout", "compiling took more than 2.0 s")
    assert statuses[48][0] == "compile error" and "does not divide" in statuses[48][1]
    assert result.config["block"] in (32, 64)
    assert state["peak"] >= 2  # compiled side by side

    monkeypatch.setenv("TILELANG_AUTO_TUNING_CPU_COUNTS", "1")
    deadline = time.monotonic() + 10
    while state["now"] and time.monotonic() < deadline:  # the abandoned slow compile finishes
        time.sleep(0.05)
    state["peak"] = 0
    tuner.configs = [{"block": 32}, {"block": 64}]
    tuner.run(warmup=1, rep=3, timeout=2.0)
    assert state["peak"] == 1


def test_worker_count_follows_tileLang_variables(monkeypatch):
    for var in ("TILELANG_AUTO_TUNING_CPU_COUNTS", "TILELANG_AUTO_TUNING_MAX_CPU_COUNT",
                "TILELANG_AUTO_TUNING_CPU_UTILITIES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 10)
    assert AutoTuner._num_workers(100) == 9      # 0.9 of the CPUs
    assert AutoTuner._num_workers(3) == 3        # never more than the configs
    monkeypatch.setenv("TILELANG_AUTO_TUNING_CPU_UTILITIES", "0.5")
    assert AutoTuner._num_workers(100) == 5
    monkeypatch.setenv("TILELANG_AUTO_TUNING_MAX_CPU_COUNT", "2")
    assert AutoTuner._num_workers(100) == 2
    monkeypatch.setenv("TILELANG_AUTO_TUNING_CPU_COUNTS", "7")
    assert AutoTuner._num_workers(100) == 2      # the cap still applies
    monkeypatch.delenv("TILELANG_AUTO_TUNING_MAX_CPU_COUNT")
    assert AutoTuner._num_workers(100) == 7
