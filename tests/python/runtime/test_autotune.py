"""tilelang.autotune over @tilelang.jit builders."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from rt_kernels import gemm, gemm_ref


def test_autotune_picks_a_valid_config_and_reports_skipped_ones(capsys):
    configs = [
        {"block_M": 32, "block_N": 32},
        {"block_M": 64, "block_N": 64},
        {"block_M": 64, "block_N": "not a number"},  # the builder fails: skipped
    ]

    @tilelang.autotune(configs=configs, warmup=2, rep=10, ref_prog=gemm_ref, atol=5e-2, rtol=2e-2)
    @tilelang.jit(out_idx=[-1])
    def matmul(M, N, K, block_M=64, block_N=64):
        return gemm(M, N, K, block_M, block_N, 32)

    kernel = matmul(128, 128, 64)
    assert kernel.config in configs[:2]
    assert kernel.latency > 0
    result = matmul.get_tuner_result(128, 128, 64)
    statuses = [r.status for r in result.results]
    assert statuses[:2] == ["ok", "ok"] and statuses[2] == "compile error"
    assert result.latency == min(r.latency for r in result.results[:2])
    assert "skipped (compile error)" in capsys.readouterr().err
    a = np.random.default_rng(0).standard_normal((128, 64)).astype(np.float16)
    b = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float16)
    np.testing.assert_allclose(kernel(a, b).astype(np.float32), gemm_ref(a, b).astype(np.float32), atol=5e-2,
                               rtol=2e-2)
    assert matmul(128, 128, 64) is kernel  # tuned once per argument set


def _scaled_copy(N, factor):
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                B[bx * 64 + i] = A[bx * 64 + i] * factor
    return k


def test_autotune_skips_configs_that_fail_the_check():
    @tilelang.autotune(configs=lambda N: [{"factor": 1.0}, {"factor": 2.0}], warmup=1, rep=5,
                       ref_prog=lambda a: a * 2.0, verbose=False)
    @tilelang.jit(out_idx=[1])
    def scaled(N, factor=1.0):
        return _scaled_copy(N, factor)

    kernel = scaled(256)
    assert kernel.config == {"factor": 2.0}
    r = scaled.get_tuner_result(256)
    assert [x.status for x in r.results] == ["check failed", "ok"]
    assert "output 'B'" in r.results[0].message

    # skip_check keeps both.
    @tilelang.autotune(configs=[{"factor": 1.0}, {"factor": 2.0}], warmup=1, rep=5, ref_prog=lambda a: a * 2.0,
                       skip_check=True, verbose=False)
    @tilelang.jit(out_idx=[1])
    def unchecked(N, factor=1.0):
        return _scaled_copy(N, factor)

    unchecked(256)
    assert [x.status for x in unchecked.get_tuner_result(256).results] == ["ok", "ok"]


def _slow(N, reps):
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            acc = T.alloc_var("float32")
            acc = 0.0
            for r in T.serial(reps):
                for i in T.serial(N):
                    acc = acc + A[i] * 0.5
            for i in T.serial(N):
                B[i] = A[i] + acc * 0.0
    return k


def test_autotune_timeout_skips_slow_configs():
    # The fast config is compiled beforehand (the autotuner then hits the in-process memo), so the timeout
    # measures running only, whatever the load of the machine; the slow config runs ~0.4 s per call (at
    # least 5 calls: check + bench), past the 0.5 s timeout.
    tilelang.compile(_slow(1024, 1), out_idx=[1])

    @tilelang.autotune(configs=[{"reps": 1}, {"reps": 400000}], warmup=1, rep=3, timeout=0.5, verbose=False)
    @tilelang.jit(out_idx=[1])
    def slow(N, reps=1):
        return _slow(N, reps)

    kernel = slow(1024)
    assert kernel.config == {"reps": 1}
    assert [r.status for r in slow.get_tuner_result(1024).results] == ["ok", "timeout"]


def test_autotune_all_configs_fail():
    @tilelang.autotune(configs=[{"block_M": "x"}], verbose=False)
    @tilelang.jit(out_idx=[-1])
    def broken(M, block_M=64):
        return gemm(M, M, M, block_M, 32, 32)

    with pytest.raises(RuntimeError, match="none of the 1 configs"):
        broken(64)
    with pytest.raises(ValueError, match="configs"):
        tilelang.autotune(configs=None)


def test_configs_that_generate_the_same_cpu_kernel_are_built_and_measured_once(capsys):
    # On cpu, num_stages and threads do not change the generated C++ (TileLang's gemv example tunes
    # 720 configs that make 36 distinct kernels): one system-compiler run and one measurement per
    # distinct kernel; every config still gets its result, and the pick is correct.
    from tilelang import _core

    configs = [{"block_M": bm, "num_stages": s, "threads": t} for bm in (16, 32) for s in (0, 1, 2)
               for t in (64, 128)]

    @tilelang.autotune(configs=configs, warmup=1, rep=5, ignore_cache=True)
    @tilelang.jit(out_idx=[-1], target="cpu")
    def gemv(M, K, block_M=16, num_stages=0, threads=64):
        @T.prim_func
        def main(A: T.Tensor((M, K), "float32"), x: T.Tensor((K,), "float32"), y: T.Tensor((M,), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bm:
                acc = T.alloc_fragment((block_M,), "float32")
                a_s = T.alloc_shared((block_M, 32), "float32")
                T.clear(acc)
                for ko in T.Pipelined(T.ceildiv(K, 32), num_stages=num_stages):
                    T.copy(A[bm * block_M, ko * 32], a_s)
                    for i, k in T.Parallel(block_M, 32):
                        acc[i] += a_s[i, k] * x[ko * 32 + k]
                T.copy(acc, y[bm * block_M])
        return main

    before = _core.build_memo_stats()
    kernel = gemv(128, 96)
    after = _core.build_memo_stats()
    result = gemv.get_tuner_result(128, 96)
    assert [r.status for r in result.results] == ["ok"] * len(configs)
    assert after[0] - before[0] == 2  # one build per block_M
    assert after[1] - before[1] == len(configs) - 2
    measured_once = [r for r in result.results if "measured once" in r.message]
    assert len(measured_once) == len(configs) - 2
    for r in result.results:  # a config shares the time of the first config with its block_M
        first = next(q for q in result.results if q.config["block_M"] == r.config["block_M"])
        assert r.latency == first.latency
    assert "compiled to the kernel of another config and were measured once" in capsys.readouterr().err
    rng = np.random.default_rng(7)
    a = rng.standard_normal((128, 96)).astype(np.float32)
    x = rng.standard_normal(96).astype(np.float32)
    np.testing.assert_allclose(kernel(a, x), a.astype(np.float64) @ x.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_nvrtc_warm_up_runs_in_the_background_for_cuda_only():
    """The tuner loads NVRTC in a background thread while it builds and ranks (cuda and "auto"
    only); the thread ends on its own, with or without NVRTC or a device."""
    from tilelang.autotuner import AutoTuner

    def tuner(target):
        return AutoTuner.from_kernel(kernel=lambda: None, configs=[{}]).set_compile_args(target=target)

    for target in ("cpu", "ascend", "npuir"):
        assert tuner(target)._warm_up_compiler() is None
    for target in ("cuda -arch=sm_90a", "cuda", "auto"):
        thread = tuner(target)._warm_up_compiler()
        assert thread is not None and thread.daemon
        thread.join(timeout=60)
        assert not thread.is_alive()
