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
