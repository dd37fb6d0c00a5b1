"""autotuner/tuner.py with top_k: the ranking's lowerings run in the pool while the IRs are built
and the model in the calling thread (the estimates must not change), and each pick is measured as
soon as it compiled while the others compile, a failed pick replaced at once by the next-ranked
one (the same configurations measured as when the replacements waited for the whole round), and
phase_seconds adds up to the wall time."""
import os
import sys
import threading
import time

import numpy as np
import pytest

import tilelang
from tilelang import tilesight
from tilelang.autotuner import AutoTuner

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import kernel_zoo as zoo  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "ascend"))

SM90 = "cuda -arch=sm_90a"


def _gemm(bm, bn, bk=32, stages=2, threads=128, M=1024, N=1024, K=512, dtype="float16", accum="float32"):
    return zoo.gemm(M, N, K, bm, bn, bk, dtype, accum, dtype, num_stages=stages, threads=threads)


# ---- the estimates ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", [SM90, "cuda -arch=sm_80", "cpu", "ascend"])
def test_an_estimate_with_its_lowering_done_ahead_is_the_same(target):
    """estimate(f, lowering=lower_for_estimate(f)) (the tuner's split: the lowering in a worker
    thread, the model in its own) equals estimate(f) field by field, including a configuration the
    sm_90a lowering rejects (flash 64x64 on 256 threads: a layout conflict) and a misfit."""
    if target == "ascend":
        import gemm_expert
        funcs = [gemm_expert.matmul.get_tir(512, 512, 256, bm, bn, 128) for bm, bn in ((64, 64), (128, 128), (256, 256))]
    else:
        funcs = [_gemm(128, 128, 32, 3, 128), _gemm(128, 256, 64, 3, 256), _gemm(256, 256, 128, 4, 128),
                 zoo.flashattn(1, 2, 512, 128, False, block_M=128, block_N=64, num_stages=2, threads=256),
                 zoo.flashattn(1, 2, 512, 128, False, block_M=64, block_N=64, num_stages=2, threads=256)]
    opts = dict(target=target, pass_configs=None, compile_flags=None)
    seen = set()
    for f in funcs:
        plain = tilesight.estimate(f, target=target, compile_options=opts)
        lowering = tilesight.lower_for_estimate(f, target=target, compile_options=opts)
        ahead = tilesight.estimate(f, target=target, compile_options=opts, lowering=lowering)
        assert ahead.as_dict() == plain.as_dict(), (target, plain)
        seen.add(plain.fits)
        if target == SM90 and not plain.fits:
            assert any("cuda lowering rejects it" in r for r in plain.reasons) or "shared memory" in plain.reasons[0]
    assert seen == ({True} if target == "cpu" else {True, False}), target   # cpu: no capacity limit


def test_the_tuners_ranking_is_the_serial_estimates_ranking():
    """_build_and_rank (lowerings in the pool while building, estimates as they finish) gives every
    configuration the estimate a plain tilesight.estimate call gives it, and keeps the top_k of that
    order; the sm_90a compiles then reuse the ranking's lowerings."""
    from tilelang import _core
    from tilelang.autotuner.param import ConfigResult
    configs = [dict(block_M=bm, block_N=bn, num_stages=st, threads=th) for bm, bn, st, th in
               ((64, 64, 2, 128), (128, 64, 2, 256), (128, 128, 2, 256), (64, 64, 2, 256), (64, 128, 3, 128),
                (128, 32, 2, 256), (64, 256, 2, 128))]

    def builder(block_M, block_N, num_stages, threads):
        return zoo.flashattn(1, 4, 1024, 128, False, block_M=block_M, block_N=block_N, num_stages=num_stages,
                             threads=threads)

    tuner = AutoTuner.from_kernel(builder, configs, top_k=3).set_compile_args(out_idx=[-1], target=SM90)
    tuner.verbose = False
    _core.clear_memo()
    results = [ConfigResult(dict(c)) for c in configs]
    prims, held, _ = tuner._build_and_rank(configs, results)
    serial = [tilesight.estimate(builder(**c), target=SM90, compile_options=tuner._compile_options(c))
              for c in configs]
    for r, e in zip(results, serial):
        assert r.estimate.as_dict() == e.as_dict(), r.config
    fits = sorted((e.time_s, i) for i, e in enumerate(serial) if e.fits)
    assert tuner._top_k_order == [i for _, i in fits[:3]]
    assert [i for i, p in enumerate(prims) if p is not None] == sorted(tuner._top_k_order)
    assert list(held) == [i for _, i in fits[3:]]
    assert {results[i].status for i in range(len(configs)) if not serial[i].fits} == {"does not fit"}


# ---- compile and measure ------------------------------------------------------------------------------------
class _Kernel:
    """A compiled configuration as the tuner's measurement sees it (no device, no build)."""

    def __init__(self, rank, latency, log):
        self.rank, self.latency, self.log, self.prim_func = rank, latency, log, None
        self.params = []

    def get_profiler(self, supply_type=None):
        return self

    def _get_inputs(self):
        return []

    def do_bench(self, warmup=25, rep=100, input_tensors=None, **_kw):
        self.log.append(("measure", self.rank, time.monotonic()))
        time.sleep(0.15)
        self.log.append(("measured", self.rank, time.monotonic()))
        return self.latency

    def update_tuner_result(self, *_a):
        pass

    def get_kernel_source(self):
        return ""


def _fake_compiles(configs, plan):
    """A tuner over cpu GEMM configs (real IRs and TileSight ranking) whose compile is replaced by
    `plan[rank] = (seconds, latency or None to fail)`, keyed by TileSight rank (1 = best)."""
    def builder(block_M, block_N):
        return _gemm(block_M, block_N, 32, dtype="float32", accum="float32", M=256, N=256, K=64)

    est = [tilesight.estimate(builder(**c), target="cpu") for c in configs]
    rank_of = {i: r + 1 for r, i in enumerate(sorted(range(len(configs)), key=lambda i: (est[i].time_s, i)))}
    log, lock = [], threading.Lock()
    tuner = AutoTuner.from_kernel(builder, configs, top_k=3)
    tuner.set_compile_args(out_idx=[-1], target="cpu").set_profile_args(skip_check=True)
    tuner.verbose, tuner.ignore_cache = False, True

    def compile_(prim, config):
        rank = rank_of[configs.index({k: v for k, v in config.items()})]
        seconds, latency = plan.get(rank, (0.05, 1.0 + rank))
        with lock:
            log.append(("compile", rank, time.monotonic()))
        time.sleep(seconds)
        with lock:
            log.append(("compiled", rank, time.monotonic()))
        if latency is None:
            raise RuntimeError(f"rank {rank} does not compile")
        return _Kernel(rank, latency, log)

    tuner._compile = compile_
    return tuner, rank_of, log


CPU_CONFIGS = [{"block_M": bm, "block_N": bn} for bm, bn in
               ((16, 16), (32, 32), (64, 64), (64, 32), (32, 64), (128, 64), (64, 128), (16, 64))]


def test_picks_are_measured_while_the_others_compile_and_a_failure_is_replaced_at_once():
    # rank 1 fails, its replacement (rank 4) fails too, rank 5 replaces that; rank 2 compiles slowly
    plan = {1: (0.05, None), 2: (1.5, 3.0), 3: (0.05, 2.5), 4: (0.05, None), 5: (0.05, 1.5)}
    tuner, rank_of, log = _fake_compiles(CPU_CONFIGS, plan)
    t0 = time.monotonic()
    result = tuner.run(warmup=1, rep=1)
    wall = time.monotonic() - t0
    status = {rank_of[i]: r.status for i, r in enumerate(result.results)}
    assert status == {1: "compile error", 2: "ok", 3: "ok", 4: "compile error", 5: "ok", 6: "not measured",
                      7: "not measured", 8: "not measured"}, status
    # the same configurations the refill-after-the-round rule measures; the best of them wins
    assert rank_of[CPU_CONFIGS.index(result.config)] == 5 and result.latency == 1.5
    replaced = [r for i, r in enumerate(result.results) if rank_of[i] in (4, 5)]
    assert all("in place of a better-ranked configuration" in r.message for r in replaced if r.status == "ok")
    assert "does not compile" in result.results[[i for i in rank_of if rank_of[i] == 1][0]].message
    # each replacement started as soon as the failure was known (not after the slow rank 2), and
    # rank 3 and 5 were measured before rank 2 finished compiling
    when = {(what, rank): t for what, rank, t in log}
    assert when[("compile", 4)] < when[("compiled", 2)] and when[("compile", 5)] < when[("compiled", 2)]
    assert when[("measure", 3)] < when[("compiled", 2)] and when[("measure", 5)] < when[("compiled", 2)]
    assert when[("measure", 2)] >= when[("compiled", 2)]
    p = tuner.phase_seconds
    assert p["compiled"] == 3 and p["overlap"] > 0.2 and p["measure"] >= 3 * 0.15
    total = p["build"] + p["rank"] + p["compile"] + p["measure"] - p["overlap"]
    # the phases do not count any second twice, and leave out only run()'s own bookkeeping
    assert -0.02 < wall - total < 0.3, (p, wall)


def test_exhaustive_measures_after_every_compile_and_agrees_on_the_best():
    plan = {r: (0.05, 10.0 - r) for r in range(1, 9)}   # the worst-ranked is the fastest: exhaustive finds it
    plan[3] = (0.05, None)
    tuner, rank_of, log = _fake_compiles(CPU_CONFIGS, plan)
    tuner.set_top_k(None)
    result = tuner.run(warmup=1, rep=1)
    assert rank_of[CPU_CONFIGS.index(result.config)] == 8 and result.latency == 2.0
    last_compile = max(t for what, _, t in log if what == "compiled")
    assert min(t for what, _, t in log if what == "measure") >= last_compile
    assert tuner.phase_seconds["overlap"] == 0 and tuner.phase_seconds["compiled"] == 7
    # top_k measures the same way: the same latencies for the configurations both measured
    tk_tuner, rank_of2, _ = _fake_compiles(CPU_CONFIGS, plan)
    tk = tk_tuner.run(warmup=1, rep=1)
    assert rank_of2 == rank_of
    both = [i for i, r in enumerate(tk.results) if r.status == "ok"]
    assert sorted(rank_of[i] for i in both) == [1, 2, 4]
    assert all(tk.results[i].latency == result.results[i].latency for i in both)


def test_top_k_finds_exhaustives_best_on_the_ascend_simulator():
    """The simulator's timing is deterministic: top_k=2 over eight GEMM tilings (none dropped)
    returns exactly the configuration and latency exhaustive tuning returns, measuring two."""
    import gemm_expert
    configs = [{"block_M": bm, "block_N": bn, "K_L1": kl} for bm, bn, kl in
               ((64, 64, 128), (128, 128, 128), (128, 64, 128), (64, 128, 128), (128, 256, 64), (256, 128, 64),
                (128, 128, 64), (64, 256, 128))]

    def tune(top_k):
        @tilelang.autotune(configs=configs, top_k=top_k, warmup=1, rep=1, verbose=False, ignore_cache=True)
        @tilelang.jit(out_idx=[-1], target="ascend")
        def matmul(M, N, K, block_M=128, block_N=128, K_L1=128):
            return gemm_expert.matmul.get_tir(M, N, K, block_M, block_N, K_L1)
        return matmul.get_tuner_result(1024, 1024, 512)

    ex, tk = tune(None), tune(2)
    assert [r.status for r in ex.results].count("ok") == 8
    assert [r.status for r in tk.results].count("ok") == 2
    assert tk.config == ex.config and tk.latency == ex.latency
    a = np.random.default_rng(0).standard_normal((1024, 512)).astype(np.float16)
    b = np.random.default_rng(1).standard_normal((512, 1024)).astype(np.float16)
    np.testing.assert_allclose(tk.kernel(a, b).astype(np.float64), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=2e-2, atol=0.5)
