"""The autotuner: compile every configuration, check it against a reference, time it, keep the fastest.

Two ways in, as in TileLang:

    @tilelang.autotune(configs=[{"block_M": 64}, {"block_M": 128}], ref_prog=ref)
    @tilelang.jit(out_idx=[-1])
    def matmul(M, N, K, block_M=64):
        ...
    kernel = matmul(1024, 1024, 1024)        # tunes once per argument set, returns the best kernel
    kernel = matmul(1024, 1024, 1024, block_M=128)   # tuned parameters given: exactly that config

    result = (AutoTuner.from_kernel(kernel=builder, configs=configs)
              .set_compile_args(out_idx=[-1], target="auto")
              .set_profile_args(ref_prog=ref, skip_check=False)
              .run(warmup=3, rep=20))        # AutotuneResult: .config, .kernel, .latency, ...

Configurations are built in the calling thread (the frontend runs Python), compiled in parallel
threads (the system compiler runs in parallel processes), then checked and timed one at a time
(with top_k, each kept one as soon as it has compiled, while the others still compile). A
configuration that fails to build, fails the check or exceeds `timeout` seconds is skipped and
reported; if none survives, RuntimeError lists why each failed. With `verbose` and tqdm installed,
progress bars show both phases with the best time so far (without tqdm: one log line per config).
The outcome is saved in the cache directory and reused by the next run with the same key
(store.py); `ignore_cache=True` or TILELANG_AUTO_TUNING_DISABLE_CACHE=1 tunes anew.

`top_k=N` (tilelang-cpp's addition; TileLang's autotuner has no such option) ranks the built
configurations with TileSight (tilelang.tilesight: a cost model over the IR, nothing is compiled or
run), drops those that cannot fit the target (shared memory, registers, UB: status "does not fit",
the reason in the message) and compiles and measures only the N best-ranked (a kept one that fails
to compile is replaced by the next-ranked); the others are reported as "not measured" with their
estimate. The ranking's compiler work (on sm_90a each estimate lowers its configuration) runs in a
thread pool from the moment each IR is built; the estimates' Python model runs in the calling
thread as those lowerings finish.
"""
import concurrent.futures
import dataclasses
import functools
import inspect
import logging
import os
import sys
import threading
import time
from typing import Any, Callable, Optional

from ..profiler import TensorSupplyType
from . import store
from .capture import get_autotune_inputs
from .param import AutotuneResult, CompileArgs, ConfigResult, ProfileArgs

__all__ = ["AutoTuner", "AutoTuneImpl", "autotune"]

logger = logging.getLogger(__name__)
# TileLang installs its own log handlers on first use; this implementation never does (it reports
# skipped configurations on stderr when verbose), so there is nothing to initialise.
_logger_handlers_initialized = True

_PASS_CONFIGS_KEY = "pass_configs"  # a config entry with per-config pass configs, not a builder argument


def _check_top_k(top_k):
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"autotune: top_k must be a positive int (how many TileSight-ranked configs to "
                         f"measure) or None, got {top_k!r}")
    return top_k


def _freeze(x):
    from ..jit import _freeze as f
    return f(x)


def _short(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + " ..."


def _same_kernel(kernel):
    """What makes two compiled configs the same kernel (None: unknown, measure it). Configs that
    differ only in what the target ignores (num_stages and threads on cpu) generate the same source;
    they share the build too (src/runtime/build_memo.h)."""
    try:
        target = str(kernel.target)
        if not target.startswith(("cpu", "cuda")):
            return None  # the source is what is compiled only on cpu and cuda (ascend runs the lowered IR)
        return (kernel.kernel_source, kernel.host_source, target, repr(sorted(kernel.pass_configs.items())),
                tuple(kernel.out_idx), repr(_param_signature(kernel)))
    except Exception:  # noqa: BLE001 - a kernel object without these is measured on its own
        return None


def _param_signature(kernel):
    return [(p.name, p.dtype, tuple(p.shape)) for p in kernel.params if p.role == "input"]


class _Measurements:
    """Checks and times compiled configurations, one at a time, in the calling thread: the same calls
    with the same arguments in both modes (exhaustive and top_k). Keeps the inputs (generated once
    per signature), the reference's latency, the best time so far, and when it measured (for
    AutoTuner.phase_seconds)."""

    def __init__(self, tuner, warmup, rep, timeout, results):
        self.tuner, self.warmup, self.rep, self.timeout, self.results = tuner, warmup, rep, timeout, results
        self.inputs, self.inputs_sig = None, None
        self.ref_latency = None
        self.best_ms, self.failed, self.n_same = None, 0, 0
        self.t_inputs = 0.0          # generating the profiler's inputs (once per signature)
        self.timed = {}              # _same_kernel key -> the config measured for it
        self.intervals = []          # (start, end) of each measure() call
        self.progress = None

    def seconds(self):
        return sum(b - a for a, b in self.intervals)

    def seconds_before(self, t):
        """Seconds spent measuring before time `t` (while compiles were still running)."""
        return sum(max(0.0, min(b, t) - a) for a, b in self.intervals)

    def close(self):
        if self.progress is not None:
            self.progress.close()

    def measure(self, i, kernel):
        if self.progress is None:
            tuner = self.tuner
            total = tuner.top_k if tuner.top_k is not None else sum(1 for r in self.results if r.status == "ok")
            self.progress = store.Progress(total, f"Tuning {tuner._name()}", tuner.verbose)
        t0 = time.monotonic()
        try:
            self._measure(i, kernel)
        finally:
            self.intervals.append((t0, time.monotonic()))

    def _measure(self, i, kernel):
        results, tuner, progress = self.results, self.tuner, self.progress
        p = tuner.profile_args
        warmup, rep, timeout = self.warmup, self.rep, self.timeout
        same = _same_kernel(kernel)
        j = self.timed.get(same) if same is not None else None
        if j is not None:
            # The same kernel (source, target, options) as a config already measured: the same
            # binary on the same inputs, so its check and time are that config's.
            r = results[j]
            results[i].status, results[i].latency = r.status, r.latency
            results[i].message = f"compiled to the same kernel as config {r.config}; measured once"
            if r.status != "ok":
                results[i].message = r.message
                self.failed += 1
            self.n_same += 1
            progress.step(self.best_ms, self.failed)
            return
        if same is not None:
            self.timed[same] = i
        profiler = kernel.get_profiler(p.supply_type)
        try:
            if p.supply_prog is not None:
                args = list(p.supply_prog(profiler._get_params()))
            else:
                sig = _param_signature(kernel)
                if self.inputs is None or sig != self.inputs_sig:
                    t_in = time.monotonic()
                    self.inputs, self.inputs_sig = profiler._get_inputs(), sig
                    self.t_inputs += time.monotonic() - t_in
                args = self.inputs
        except Exception as e:  # noqa: BLE001
            results[i].status, results[i].message = "run error", _short(e)
            return
        try:
            if not p.skip_check and p.manual_check_prog is not None and p.ref_prog is not None:
                tuner._with_timeout(lambda: profiler.manual_assert_close(
                    p.ref_prog, input_tensors=args, manual_check_prog=p.manual_check_prog), timeout)
            elif not p.skip_check and p.ref_prog is not None:
                tuner._with_timeout(lambda: profiler.assert_allclose(
                    p.ref_prog, atol=p.atol, rtol=p.rtol, max_mismatched_ratio=p.max_mismatched_ratio,
                    input_tensors=args), timeout)
            results[i].latency = tuner._with_timeout(
                lambda: profiler.do_bench(warmup=warmup, rep=rep, input_tensors=args), timeout)
            if self.ref_latency is None and p.ref_prog is not None:
                try:
                    self.ref_latency = profiler.do_bench(p.ref_prog, warmup=warmup, rep=rep, input_tensors=args)
                except Exception:  # noqa: BLE001 - a reference that cannot be timed is fine
                    self.ref_latency = None
        except AssertionError as e:
            results[i].status, results[i].message = "check failed", _short(e)
        except TimeoutError as e:
            results[i].status, results[i].message = "timeout", str(e)
        except Exception as e:  # noqa: BLE001
            results[i].status, results[i].message = "run error", _short(e)
        if results[i].status == "ok":
            self.best_ms = results[i].latency if self.best_ms is None else min(self.best_ms, results[i].latency)
            if not progress.active:
                tuner._log(f"config {results[i].config}: {results[i].latency:.4f} ms")
        else:
            self.failed += 1
        progress.step(self.best_ms, self.failed)


class AutoTuner:
    """Tunes a kernel builder over `configs` (a list of dicts of builder keyword arguments)."""

    _memory_cache = {}
    _lock = threading.Lock()

    def __init__(self, fn, configs, top_k=None):
        self.fn = fn
        self.configs = configs
        self.top_k = _check_top_k(top_k)
        self.compile_args = CompileArgs()
        self.profile_args = ProfileArgs()
        self.jit_compile = None     # prim_func, config -> kernel (set by AutoTuneImpl)
        self.jit_elaborate = None   # **config -> prim_func
        self.jit_target = None      # the @tilelang.jit target (TileSight estimates for it)
        self.jit_compile_options = None  # per-config pass configs -> tilelang.compile's options (jit)
        self._kernel_parameters = None
        self._function_parameters = None
        self.verbose = True
        self.ignore_cache = False   # tune even when a saved result exists (and overwrite it)
        self.phase_seconds = None   # after a tuning run: seconds spent building, ranking, compiling, measuring

    @classmethod
    def from_kernel(cls, kernel, configs, top_k=None):
        """An AutoTuner for `kernel`, a function returning a @T.prim_func for a config's keywords.
        `top_k`: measure only the N configurations TileSight ranks best (None: all)."""
        return cls(kernel, configs, top_k)

    def set_top_k(self, top_k):
        """Measure only the `top_k` configurations TileSight ranks best (None: all of them)."""
        self.top_k = _check_top_k(top_k)
        return self

    def set_compile_args(self, out_idx=None, target="auto", execution_backend="auto", target_host=None, verbose=False,
                         pass_configs=None, compile_flags=None):
        self.compile_args = CompileArgs(out_idx=out_idx, execution_backend=execution_backend or "auto",
                                        target=target or "auto", target_host=target_host, verbose=bool(verbose),
                                        pass_configs=pass_configs, compile_flags=compile_flags)
        return self

    def set_profile_args(self, warmup=25, rep=100, timeout=30, supply_type=TensorSupplyType.Auto, ref_prog=None,
                         supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01, skip_check=False,
                         manual_check_prog=None, cache_input_tensors=False, backend="event"):
        captured = get_autotune_inputs()
        if captured is not None:
            frozen = list(captured)
            supply_prog = lambda params, _t=frozen: _t  # noqa: E731
        self.profile_args = ProfileArgs(warmup=warmup, rep=rep, timeout=timeout, backend=backend,
                                        supply_type=supply_type, ref_prog=ref_prog, supply_prog=supply_prog,
                                        rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                                        skip_check=skip_check, manual_check_prog=manual_check_prog,
                                        cache_input_tensors=cache_input_tensors)
        return self

    def set_kernel_parameters(self, k_parameters, f_parameters):
        self._kernel_parameters = k_parameters
        self._function_parameters = f_parameters

    def generate_cache_key(self, parameters, extra_parameters):
        """The in-process cache key of a tuning run (None: not cached). Runs with callbacks whose
        identity cannot be told apart (ref_prog, supply_prog, manual_check_prog) are not cached."""
        p = self.profile_args
        if any(cb is not None for cb in (p.ref_prog, p.supply_prog, p.manual_check_prog)):
            return None
        try:
            src = inspect.getsource(self.fn)
        except (OSError, TypeError):
            return None
        return repr((src, _freeze(self._kernel_parameters), _freeze(extra_parameters),
                     _freeze(self.configs if not callable(self.configs) else None), hash(self.compile_args),
                     hash(self.profile_args), self.top_k))

    def _log(self, msg):
        if self.verbose:
            print(f"[tilelang.autotune] {msg}", file=sys.stderr, flush=True)

    def _configs(self):
        configs = self.configs
        if callable(configs):
            args, kwargs = self._kernel_parameters or ((), ())
            configs = configs(*args, **dict(kwargs))
        configs = list(configs or [])
        if not configs:
            raise ValueError("autotune: no configs to try (configs is empty)")
        for c in configs:
            if not isinstance(c, dict):
                raise ValueError(f"autotune: every config must be a dict of builder keyword arguments, got {c!r}")
        return configs

    def _elaborate(self, config):
        args = {k: v for k, v in config.items() if k != _PASS_CONFIGS_KEY}
        if self.jit_elaborate is not None:
            return self.jit_elaborate(**args)
        return self.fn(**args)

    def _compile(self, prim, config):
        per_config = config.get(_PASS_CONFIGS_KEY)
        if self.jit_compile is not None:
            return self.jit_compile(prim, per_config)
        return self.compile_args.compile_program(prim, per_config)

    def _compile_options(self, config):
        """The target, pass configs and compile flags `config` is compiled with: TileSight lowers it
        with these so that the compile of a kept configuration reuses that lowering. None when the
        compile function was replaced without saying how it compiles."""
        per_config = config.get(_PASS_CONFIGS_KEY)
        if self.jit_compile is not None:
            return self.jit_compile_options(per_config) if self.jit_compile_options is not None else None
        ca = self.compile_args
        merged = dict(ca.pass_configs or {})
        merged.update(per_config or {})
        return dict(target=ca.target, pass_configs=merged or None, compile_flags=ca.compile_flags)

    def run(self, warmup=25, rep=100, timeout=180, **_ignored):
        """Compiles, checks and times every configuration; returns the AutotuneResult of the
        fastest. A result saved by an earlier run with the same key is reused (store.py).
        (TileLang's pipelining / multi-GPU options are accepted and ignored.)"""
        key = None
        params = {}
        try:
            params = dict(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            pass
        key = self.generate_cache_key(params, {})
        if key is not None and key in self._memory_cache and not self.ignore_cache:
            return self._memory_cache[key]
        configs = self._configs()
        self._run_options = (warmup, rep, timeout)
        disk_key = store.result_key(self, configs) if store.enabled() else None
        result = None
        if disk_key is not None and not self.ignore_cache:
            result = self._from_disk(disk_key, configs)
        if result is None:
            result = self._run(warmup, rep, timeout, configs)
            if disk_key is not None:
                store.save(disk_key, configs, result, self._best_index)
        if key is not None:
            with self._lock:
                self._memory_cache[key] = result
        return result

    def _from_disk(self, disk_key, configs):
        """The AutotuneResult of a saved run: only its best configuration is compiled (a kernel-cache
        hit). None when there is none or it cannot be reused."""
        record = store.load(disk_key)
        if record is None:
            return None
        try:
            i = int(record["best_index"])
            saved = record["results"]
            if len(saved) != len(configs) or repr(configs[i]) != record["best_config"]:
                return None
            kernel = self._compile(self._elaborate(configs[i]), configs[i])
        except Exception as e:  # noqa: BLE001 - tune instead
            self._log(f"the saved tuning result could not be reused ({_short(e)}); tuning again")
            return None
        results = [ConfigResult(dict(c), r.get("latency"), r.get("status", "ok"), r.get("message", ""))
                   for c, r in zip(configs, saved)]
        latency, ref_latency = record.get("latency"), record.get("ref_latency")
        kernel.update_tuner_result(latency, results[i].config, ref_latency)
        self._report_skipped(results)
        self._log(f"best config {results[i].config}: {latency:.4f} ms (saved by an earlier run; "
                  "TILELANG_AUTO_TUNING_DISABLE_CACHE=1 or ignore_cache=True to tune again)")
        self._best_index = i
        return AutotuneResult(latency=latency, config=results[i].config, ref_latency=ref_latency,
                              libcode=kernel.get_kernel_source(), func=kernel.prim_func, kernel=kernel,
                              results=results)

    def _report_skipped(self, results):
        for r in results:
            if r.status in ("ok", "not measured"):
                continue
            first = r.message.splitlines()[0] if r.message else ""
            self._log(f"config {r.config} skipped ({r.status}): {first}")
        skipped = [r for r in results if r.status not in ("ok", "not measured")]
        if skipped:
            self._log(f"{len(skipped)} of {len(results)} configs skipped")

    def _name(self):
        return getattr(self.fn, "__name__", "kernel")

    def _run(self, warmup, rep, timeout, configs=None):
        configs = self._configs() if configs is None else configs
        results = [ConfigResult(dict(c)) for c in configs]

        # 1. Build the IR of every config here (the frontend runs Python); with top_k, rank them
        #    (their lowerings start while the next configs are built). 2. Compile in parallel and
        #    check and time each compiled config: exhaustive, after all compiled; with top_k, each
        #    as soon as it compiled, while the others still compile.
        t_start = time.monotonic()
        warm_up = self._warm_up_compiler()
        prims, held, t_elaborated = self._build_and_rank(configs, results)
        t_built = time.monotonic()
        meter = _Measurements(self, warmup, rep, timeout, results)
        kernels, t_compiled = self._compile_and_measure(configs, prims, held, results, timeout, meter)
        if warm_up is not None:
            warm_up.join()  # long done (a trivial compile); not left running into interpreter exit
        meter.close()
        n_built = sum(1 for k in kernels if k is not None)
        # Where the wall time went (bench/tilesight_validate.py records it; docs/PERFORMANCE.md):
        # build + rank + compile + measure - overlap is the wall time of the run.
        overlap = meter.seconds_before(t_compiled)
        self.phase_seconds = {"build": t_elaborated - t_start, "rank": t_built - t_elaborated,
                              "compile": t_compiled - t_built, "measure": meter.seconds(), "overlap": overlap,
                              "inputs": meter.t_inputs, "compiled": n_built,
                              "compile_threads": self._num_workers(n_built)}
        self._log(f"{len(configs)} configs: built in {t_elaborated - t_start:.1f} s"
                  + (f", ranked by TileSight in {t_built - t_elaborated:.1f} s" if self.top_k is not None else "")
                  + f", {n_built} compiled in "
                  f"{t_compiled - t_built:.1f} s ({self._num_workers(n_built)} threads), checked and timed in "
                  f"{meter.seconds():.1f} s (inputs generated in {meter.t_inputs:.1f} s"
                  + (f"; {overlap:.1f} s of it while others compiled" if overlap else "") + ")"
                  + (f" ({meter.n_same} compiled to the kernel of another config and were measured once)"
                     if meter.n_same else ""))

        self._report_skipped(results)
        ok = [i for i, r in enumerate(results) if r.status == "ok" and r.latency is not None]
        if not ok:
            details = "\n".join(f"  {r.config}: {r.status}: {r.message}" for r in results)
            name = getattr(self.fn, "__name__", "the kernel")
            raise RuntimeError(f"autotune: none of the {len(configs)} configs of {name} compiled and ran "
                               f"correctly:\n{details}")
        best = min(ok, key=lambda i: results[i].latency)
        self._best_index = best
        self._log(f"best config {results[best].config}: {results[best].latency:.4f} ms")
        kernel = kernels[best]
        ref_latency = meter.ref_latency
        kernel.update_tuner_result(results[best].latency, results[best].config, ref_latency)
        return AutotuneResult(latency=results[best].latency, config=results[best].config, ref_latency=ref_latency,
                              libcode=kernel.get_kernel_source(), func=kernel.prim_func, kernel=kernel,
                              results=results)

    def _build_and_rank(self, configs, results):
        """Builds every configuration's IR in this thread. With top_k, each built configuration's
        lowering for its TileSight estimate starts in the pool at once (while the next ones are built),
        the estimates' Python runs here as the lowerings finish, and the ranking marks what is not
        compiled (_rank_top_k). Returns (prims, held, the time the last IR was built); prims[i] is
        None for a configuration that is not compiled now, held the next-ranked ones (_rank_top_k)."""
        prims = [None] * len(configs)

        def build():
            for i, c in enumerate(configs):
                try:
                    prims[i] = self._elaborate(c)
                except Exception as e:  # noqa: BLE001 - any failure skips the config
                    results[i].status, results[i].message = "compile error", _short(e)
                    continue
                yield i

        if self.top_k is None:
            for _ in build():
                pass
            return prims, {}, time.monotonic()
        stamp = {}
        outcomes = self._estimate_all(build(), prims, results, stamp, len(configs))
        return prims, self._rank_top_k(prims, results, outcomes), stamp["built"]

    def _select_top_k(self, prims, results):
        """Ranks configurations already built (prims) with TileSight; marks those that do not fit and
        those ranked below top_k so that they are not compiled (prims[i] = None). Returns held."""
        todo = [i for i, prim in enumerate(prims) if prim is not None]
        outcomes = self._estimate_all(iter(todo), prims, results, {}, len(todo))
        return self._rank_top_k(prims, results, outcomes)

    def _lower_for_rank(self, prim, config):
        """A worker thread's part of one estimate: the target and compile options it is estimated and
        lowered for, and the lowering itself (on sm_90a the C++ lowering, without the GIL; kept for
        the compile of a kept configuration)."""
        from .. import tilesight  # noqa: PLC0415
        target = self._estimate_target(prim)
        options = self._compile_options(config)
        return target, options, tilesight.lower_for_estimate(prim, target=target, compile_options=options)

    def _estimate_all(self, indices, prims, results, stamp, n):
        """{i: (Estimate or None, the exception that prevented it)} for the configurations `indices`
        yields (each once its prims[i] is built): the lowerings run in parallel threads, as compiling
        does, from the moment each is yielded; the estimates' Python model runs in this thread as they
        finish (one thread holding the GIL for it, not all of them taking turns). stamp["built"]: when
        the last index was yielded."""
        from .. import tilesight  # noqa: PLC0415
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=self._num_workers(n))
        futures = {}
        try:
            for i in indices:
                futures[pool.submit(self._lower_for_rank, prims[i], results[i].config)] = i
            stamp["built"] = time.monotonic()
            outcomes = {}
            for f in concurrent.futures.as_completed(futures):
                i = futures[f]
                try:
                    target, options, lowering = f.result()
                    outcomes[i] = tilesight.estimate(prims[i], target=target, compile_options=options,
                                                     lowering=lowering), None
                except Exception as e:  # noqa: BLE001 - an unestimable config is measured after the ranked ones
                    outcomes[i] = None, e
            return outcomes
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _rank_top_k(self, prims, results, outcomes):
        """Orders the estimated configurations (fastest first, the unestimable after them); those that
        do not fit get status "does not fit", those below top_k "not measured" (prims[i] = None).
        self._top_k_order: the kept ones, best first. Returns held: {i: prim} of the not-measured ones
        in rank order, the next candidates when a kept one fails to compile."""
        ranked, unranked = [], []
        for i in sorted(outcomes):
            est, err = outcomes[i]
            if err is not None:
                results[i].message = f"TileSight could not estimate it: {_short(err)}"
                unranked.append(i)
                continue
            results[i].estimate = est
            if not est.fits:
                results[i].status = "does not fit"
                results[i].message = "; ".join(est.reasons)
                prims[i] = None
                continue
            ranked.append((est.time_s, i))
        ranked.sort()
        order = [i for _, i in ranked] + unranked
        self._top_k_order = order[:self.top_k]
        keep = set(self._top_k_order)
        held = {}   # rank order (dicts keep insertion order): the next candidates if a kept one fails
        for rank_pos, i in enumerate(order):
            if i in keep:
                continue
            est = results[i].estimate
            held[i] = prims[i]
            results[i].status = "not measured"
            results[i].message = (f"TileSight rank {rank_pos + 1} of {len(order)}"
                                  + (f", estimated {est.time_ms:.4f} ms ({est.bound}-bound)" if est else "")
                                  + f"; top_k={self.top_k}")
            prims[i] = None
        dropped = sum(1 for r in results if r.status == "does not fit")
        self._log(f"TileSight: {len(keep)} of {len(prims)} configs to measure (top_k={self.top_k}), "
                  f"{dropped} do not fit")
        return held

    def _compile_and_measure(self, configs, prims, held, results, timeout, meter):
        """Compiles the configurations whose prims are set and has `meter` check and time each one
        (meter.measure(i, kernel)). Exhaustive: all compiled in parallel first, then measured in
        order. top_k: the kept ones compile in parallel and each is measured as soon as it compiled,
        while the others still compile (in the order they finish; the measurement itself is the same
        as exhaustive's); one that fails to compile or times out is replaced at once by the next-ranked
        held configuration, until top_k compiled or none is left. Returns (kernels, the time the last
        compile finished)."""
        if self.top_k is None:
            kernels = self._compile_all(configs, prims, results, timeout)
            t_compiled = time.monotonic()
            for i, kernel in enumerate(kernels):
                if kernel is not None:
                    meter.measure(i, kernel)
            return kernels, t_compiled
        kernels = [None] * len(configs)
        picks = [i for i in getattr(self, "_top_k_order", range(len(configs))) if prims[i] is not None]
        queue = list(held)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=self._num_workers(max(1, len(picks))))
        started, finished, running, ready = {}, {}, {}, []
        t_last = time.monotonic()

        def build(i):
            started[i] = time.monotonic()
            try:
                return self._compile(prims[i], configs[i])
            finally:
                finished[i] = time.monotonic()

        def submit(i):
            running[pool.submit(build, i)] = i

        def replace():
            if queue:
                j = queue.pop(0)
                prims[j] = held[j]
                results[j].status = "ok"
                results[j].message = "measured in place of a better-ranked configuration that failed to compile"
                submit(j)

        for i in picks:
            submit(i)
        try:
            while running or ready:
                if running:
                    done, _ = concurrent.futures.wait(list(running), timeout=0 if ready else 0.05,
                                                      return_when=concurrent.futures.FIRST_COMPLETED)
                    for f in done:
                        i = running.pop(f)
                        try:
                            kernels[i] = f.result()
                            ready.append(i)
                        except Exception as e:  # noqa: BLE001
                            results[i].status, results[i].message = "compile error", _short(e)
                            replace()
                        t_last = max(t_last, finished.get(i, time.monotonic()))
                    now = time.monotonic()
                    for f, i in list(running.items()):
                        if i in started and now - started[i] > timeout:
                            results[i].status = "timeout"
                            results[i].message = f"compiling took more than {timeout} s"
                            f.cancel()
                            del running[f]
                            t_last = max(t_last, now)
                            replace()
                if ready:
                    i = ready.pop(0)
                    meter.measure(i, kernels[i])
        finally:
            # Abandoned (timed-out) builds finish in the background; their results are ignored.
            pool.shutdown(wait=False, cancel_futures=True)
        return kernels, t_last

    def _warm_up_compiler(self):
        """cuda: the first NVRTC compile of a process also loads the library and its builtins (about
        30 ms of CPU, more of wall time reading them). A trivial compile in a background thread does
        that while the IRs are built (and, with top_k, ranked), in both modes; the compiles that follow
        find NVRTC loaded. Nothing waits for it: a compile that starts first loads NVRTC itself. Returns
        the thread (None for targets other than cuda / auto)."""
        target = self.jit_target if self.jit_target is not None else self.compile_args.target
        target = str(getattr(target, "tilelang_target", target) or "auto").strip()
        if target != "auto" and not target.startswith(("cuda", "nvidia")):
            return None

        def warm():
            import re  # noqa: PLC0415
            try:
                from .. import _core  # noqa: PLC0415
                resolved = str(_core.resolve_target(target))
                arch = re.search(r"-arch=(sm_\w+)", resolved)
                if resolved.startswith("cuda") and arch is not None:
                    _core.cuda.compile('extern "C" __global__ void tl_autotune_warm_up() {}', "warm_up.cu",
                                       arch.group(1))
            except Exception:  # noqa: BLE001 - no NVRTC, no device: the real compiles report it
                pass
        thread = threading.Thread(target=warm, name="tl-nvrtc-warm-up", daemon=True)
        thread.start()
        return thread

    def _estimate_target(self, prim):
        target = self.compile_args.target
        if self.jit_target is not None:
            target = self.jit_target
        target = str(getattr(target, "tilelang_target", target) or "auto")
        try:
            from .. import _core  # noqa: PLC0415
            from ..jit.kernel import _ir_of  # noqa: PLC0415
            return str(_core.resolve_target(target, _ir_of(prim)))
        except Exception:  # noqa: BLE001 - the estimate then resolves "auto" itself
            return target

    @staticmethod
    def _num_workers(n):
        """Parallel compilations: TILELANG_AUTO_TUNING_CPU_COUNTS when set (> 0), else that share
        (TILELANG_AUTO_TUNING_CPU_UTILITIES, default 0.9, rounded) of the CPUs, capped by
        TILELANG_AUTO_TUNING_MAX_CPU_COUNT (> 0) and by the number of configurations."""
        from ..env import env  # noqa: PLC0415

        def num(var, conv, default):
            try:
                return conv(str(var))
            except ValueError:
                return default
        counts = num(env.TILELANG_AUTO_TUNING_CPU_COUNTS, int, -1)
        if counts > 0:
            workers = counts
        else:
            workers = round((os.cpu_count() or 1) * num(env.TILELANG_AUTO_TUNING_CPU_UTILITIES, float, 0.9))
        cap = num(env.TILELANG_AUTO_TUNING_MAX_CPU_COUNT, int, -1)
        if cap > 0:
            workers = min(workers, cap)
        return max(1, min(n, workers))

    def _compile_all(self, configs, prims, results, timeout):
        kernels = [None] * len(configs)
        todo = sum(1 for p in prims if p is not None)
        workers = self._num_workers(todo)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        progress = store.Progress(todo, f"Compiling {self._name()}", self.verbose)
        failed = 0
        try:
            started = {}

            def build(i):
                started[i] = time.monotonic()
                return self._compile(prims[i], configs[i])

            futures = {pool.submit(build, i): i for i in range(len(configs)) if prims[i] is not None}
            pending = set(futures)
            while pending:
                done, pending = concurrent.futures.wait(pending, timeout=0.05)
                for f in done:
                    i = futures[f]
                    try:
                        kernels[i] = f.result()
                    except Exception as e:  # noqa: BLE001
                        results[i].status, results[i].message = "compile error", _short(e)
                        failed += 1
                    progress.step(failed=failed)
                now = time.monotonic()
                for f in list(pending):
                    i = futures[f]
                    if i in started and now - started[i] > timeout:
                        results[i].status = "timeout"
                        results[i].message = f"compiling took more than {timeout} s"
                        f.cancel()
                        pending.discard(f)
                        failed += 1
                        progress.step(failed=failed)
        finally:
            progress.close()
            # Abandoned (timed-out) builds finish in the background; their results are ignored.
            pool.shutdown(wait=False, cancel_futures=True)
        return kernels

    @staticmethod
    def _with_timeout(fn, timeout):
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        try:
            return pool.submit(fn).result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"running took more than {timeout} s") from None
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def __call__(self):
        return self.run()


@dataclasses.dataclass
class AutoTuneImpl:
    """A @tilelang.jit function under @tilelang.autotune."""

    jit_impl: Any
    warmup: float = 25
    rep: float = 100
    timeout: float = 100
    configs: Any = None
    supply_type: TensorSupplyType = TensorSupplyType.Auto
    ref_prog: Optional[Callable] = None
    supply_prog: Optional[Callable] = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.01
    skip_check: bool = False
    manual_check_prog: Optional[Callable] = None
    cache_input_tensors: bool = False
    do_not_specialize: Any = None
    early_stop: bool = False
    early_stop_factor: float = 2.0
    verbose: bool = True
    top_k: Optional[int] = None
    ignore_cache: bool = False

    def __post_init__(self):
        self._tuner_cache = {}
        try:
            from ..jit import _copy_names  # noqa: PLC0415
            _copy_names(self, self.jit_impl.func)
        except AttributeError:
            pass

    @property
    def fn(self):
        return self.jit_impl

    def get_tunner(self):
        """The AutoTuner this decorator runs (TileLang's spelling)."""
        impl = self.jit_impl
        tuner = AutoTuner(impl.func, configs=self.configs, top_k=self.top_k)
        tuner.jit_target = impl.target
        tuner.set_profile_args(warmup=self.warmup, rep=self.rep, timeout=self.timeout, supply_type=self.supply_type,
                               ref_prog=self.ref_prog, supply_prog=self.supply_prog, rtol=self.rtol, atol=self.atol,
                               max_mismatched_ratio=self.max_mismatched_ratio, skip_check=self.skip_check,
                               manual_check_prog=self.manual_check_prog,
                               cache_input_tensors=self.cache_input_tensors)
        tuner.set_compile_args(out_idx=impl.out_idx, target=impl.target, execution_backend=impl.execution_backend,
                               target_host=impl.target_host, verbose=impl.verbose, pass_configs=impl.pass_configs,
                               compile_flags=impl.compile_flags)
        tuner.verbose = self.verbose
        tuner.ignore_cache = self.ignore_cache
        tuner.run = functools.partial(tuner.run, self.warmup, self.rep, self.timeout)
        return tuner

    get_tuner = get_tunner

    # ---- which configs this call tunes over ----------------------------------------------------------
    def _given(self, args, kwargs):
        """The builder arguments of this call by name (positional ones included)."""
        sig = self.jit_impl.signature
        given = dict(kwargs)
        if sig is not None:
            names = [p.name for p in sig.parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            given.update(zip(names, args))
        return given

    def _configs_for(self, args, kwargs):
        configs = self.configs
        if callable(configs):
            configs = configs(*args, **kwargs)
        configs = list(configs or [])
        if not configs:
            raise ValueError("autotune: no configs to try (configs is empty)")
        for c in configs:
            if not isinstance(c, dict):
                raise ValueError(f"autotune: every config must be a dict of builder keyword arguments, got {c!r}")
        given = self._given(args, kwargs)
        tuned = set().union(*(c.keys() for c in configs)) - {_PASS_CONFIGS_KEY}
        fixed = {k: given[k] for k in tuned if k in given}
        if not fixed:
            return configs, {}
        # As TileLang: a call that gives any tuned parameter compiles exactly what it asks for,
        # the other tuned parameters taking the builder's defaults (nothing is timed).
        defaults = self._defaults(tuned - set(fixed))
        if defaults is not None:
            return [{}], dict(fixed, **defaults)
        # Ours where TileLang would fail (a tuned parameter left out has no default): the ones
        # left out are tuned, the given ones win over the configs' values.
        merged, seen = [], set()
        for c in configs:
            m = {k: v for k, v in c.items() if k not in fixed}
            key = _freeze(m)
            if key not in seen:
                seen.add(key)
                merged.append(m)
        return merged, fixed

    def _defaults(self, names):
        """{name: default} of the builder parameters `names`, or None if one of them has none."""
        sig = self.jit_impl.signature
        if sig is None:
            return None if names else {}
        out = {}
        for n in names:
            p = sig.parameters.get(n)
            if p is None or p.default is p.empty:
                return None
            out[n] = p.default
        return out

    def _key(self, args, kwargs):
        """Tuning happens once per key: the compile-time arguments, and for tensors their shape,
        dtype and device (not their identity or contents)."""
        def tensor_free(v):
            if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, type):
                return ("tensor", tuple(int(d) for d in v.shape), str(v.dtype), str(getattr(v, "device", "cpu")))
            return v
        args = tuple(tensor_free(a) for a in args)
        kwargs = {k: tensor_free(v) for k, v in kwargs.items()}
        if self.do_not_specialize:
            given = self._given(args, kwargs)
            return ((), _freeze({k: v for k, v in given.items() if k not in self.do_not_specialize}))
        return (_freeze(args), _freeze(kwargs))

    def _tune(self, args, kwargs):
        """The AutotuneResult for this call (tuned once per argument set)."""
        key = self._key(args, kwargs)
        result = self._tuner_cache.get(key)
        if result is not None:
            return result
        impl = self.jit_impl
        configs, fixed = self._configs_for(args, kwargs)
        if fixed and configs == [{}]:
            # The call gives tuned parameters (the others default): compile exactly that, no timing.
            kernel = impl.compile(*args, **kwargs)
            kernel.update_tuner_result(None, dict(fixed), None)
            result = AutotuneResult(config=dict(fixed), kernel=kernel, libcode=kernel.get_kernel_source(),
                                    func=kernel.prim_func,
                                    results=[ConfigResult(dict(fixed), None, "ok", "given by the caller")])
            self._tuner_cache[key] = result
            return result
        tuner = self.get_tunner()
        tuner.configs = configs

        def elaborate(**config):
            merged = dict(kwargs)
            merged.update(config)
            return impl.get_tir(*args, **merged)

        def compile_one(prim, per_config_pass_configs):
            if per_config_pass_configs:
                configs_ = dict(impl.pass_configs or {})
                configs_.update(per_config_pass_configs)
                return impl.compile_prim(prim, pass_configs=configs_)
            return impl.compile_prim(prim)

        def compile_options(per_config_pass_configs):
            merged = dict(impl.pass_configs or {})
            merged.update(per_config_pass_configs or {})
            return dict(target=impl.target, pass_configs=merged or None, compile_flags=impl.compile_flags)

        tuner.jit_elaborate = elaborate
        tuner.jit_compile = compile_one
        tuner.jit_compile_options = compile_options
        tuner.set_kernel_parameters(key, impl.signature.parameters if impl.signature else {})
        result = tuner.run()
        if fixed:
            result.config = dict(result.config, **fixed)
        self._tuner_cache[key] = result
        return result

    # ---- public -------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Lazy builders: the best kernel. Eager functions: runs the best kernel on the call's
        tensors and returns its outputs."""
        return_kernel = kwargs.pop("__return_kernel", False)
        result = self._tune(args, kwargs)
        impl = self.jit_impl
        if impl.mode == "lazy" or return_kernel:
            return result.kernel
        exec_kwargs = dict(kwargs)
        exec_kwargs.update({k: v for k, v in (result.config or {}).items() if k != _PASS_CONFIGS_KEY})
        _values, _consts, runtime = impl._bind(args, {k: v for k, v in exec_kwargs.items()
                                                      if k not in self._given(args, {})})
        return result.kernel(*runtime)

    def compile(self, *args, **kwargs):
        """The tuned (or, with every tuned parameter given, the requested) kernel, not run."""
        return self._tune(args, kwargs).kernel

    def get_tuner_result(self, *args, **kwargs):
        """The AutotuneResult of these arguments (tunes if they were not tuned yet)."""
        return self._tune(args, kwargs)


def autotune(func=None, *, configs=None, warmup=25, rep=100, timeout=100, supply_type=TensorSupplyType.Auto,
             ref_prog=None, supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01, skip_check=False,
             manual_check_prog=None, cache_input_tensors=False, do_not_specialize=None, early_stop=False,
             early_stop_factor=2.0, verbose=True, top_k=None, ignore_cache=False):
    """Decorator stacked above @tilelang.jit. `configs`: a list of dicts of builder keyword
    arguments, or a callable taking the builder's other arguments and returning such a list
    (`tilelang.autotune([...])` with the list as first argument is accepted too). `warmup` and
    `rep` are timing budgets in ms; `timeout` (s) bounds each config's compile and its run.
    `top_k`: compile and measure only the N configurations TileSight ranks best; configurations
    that cannot fit the target are dropped before compiling (None: measure every config).
    Results are saved in the cache directory and reused by later runs with the same kernel source,
    arguments, configs, options, tilelang version and machine (autotuner/store.py);
    `ignore_cache=True` (or TILELANG_AUTO_TUNING_DISABLE_CACHE=1) tunes anew. With `verbose` and
    tqdm installed, progress bars show compilation and timing with the best time so far."""
    _check_top_k(top_k)
    from ..jit import JITImpl  # noqa: PLC0415
    if func is not None:
        if isinstance(func, JITImpl):
            raise ValueError("@tilelang.autotune needs configs: @tilelang.autotune(configs=[...]) above @tilelang.jit")
        if configs is not None:
            raise TypeError("autotune: configs given twice (positionally and by keyword)")
        configs = func
    if configs is None:
        raise ValueError("autotune needs configs: a list of dicts, or a callable returning one")

    def decorate(impl):
        if not isinstance(impl, JITImpl):
            if callable(impl):
                impl = JITImpl(impl)
            else:
                raise TypeError(f"@tilelang.autotune expects a @tilelang.jit function, got {type(impl).__name__}")
        return AutoTuneImpl(jit_impl=impl, configs=configs, warmup=warmup, rep=rep, timeout=timeout,
                            supply_type=supply_type, ref_prog=ref_prog, supply_prog=supply_prog, rtol=rtol, atol=atol,
                            max_mismatched_ratio=max_mismatched_ratio, skip_check=skip_check,
                            manual_check_prog=manual_check_prog, cache_input_tensors=cache_input_tensors,
                            do_not_specialize=do_not_specialize, early_stop=early_stop,
                            early_stop_factor=early_stop_factor, verbose=verbose, top_k=top_k,
                            ignore_cache=ignore_cache)

    return decorate
