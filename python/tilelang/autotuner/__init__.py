"""tilelang.autotune: pick the fastest configuration of a @tilelang.jit kernel builder.

    @tilelang.autotune(configs=[{"block_M": 64}, {"block_M": 128}], ref_prog=ref)
    @tilelang.jit(out_idx=[-1])
    def matmul(M, N, K, block_M=64):
        ...
    kernel = matmul(1024, 1024, 1024)   # compiles every config, times them, returns the best

Configs compile in parallel (the system compiler runs in several processes); they are then timed
one at a time on the same inputs. A config that fails to build, fails the reference check, or
exceeds `timeout` seconds is skipped and reported.
"""
import concurrent.futures
import functools
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..jit import JITFunction, compile as _compile
from ..profiler import TensorSupplyType

__all__ = ["autotune", "AutotuneResult", "ConfigResult"]


@dataclass
class ConfigResult:
    config: Dict[str, Any]
    latency: Optional[float] = None  # ms; None when the config was skipped
    status: str = "ok"               # "ok", "compile error", "check failed", "timeout", "run error"
    message: str = ""


@dataclass
class AutotuneResult:
    kernel: Any
    config: Dict[str, Any]
    latency: float
    ref_latency: Optional[float] = None
    results: List[ConfigResult] = field(default_factory=list)

    def skipped(self):
        return [r for r in self.results if r.status != "ok"]


def _freeze(x):
    from ..jit import _freeze as f
    return f(x)


def _short(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + " ..."


class AutoTunedFunction:
    def __init__(self, fn, configs, warmup, rep, timeout, ref_prog, atol, rtol, skip_check, supply_type,
                 max_mismatched_ratio, verbose):
        self.fn = fn
        self.configs = configs
        self.warmup, self.rep, self.timeout = warmup, rep, timeout
        self.ref_prog, self.atol, self.rtol, self.skip_check = ref_prog, atol, rtol, skip_check
        self.supply_type = supply_type
        self.max_mismatched_ratio = max_mismatched_ratio
        self.verbose = verbose
        self._results = {}
        functools.update_wrapper(self, fn.builder if isinstance(fn, JITFunction) else fn)

    def _configs_for(self, args, kwargs):
        configs = self.configs(*args, **kwargs) if callable(self.configs) else self.configs
        configs = list(configs or [])
        if not configs:
            raise ValueError("autotune: no configs to try (configs is empty)")
        for c in configs:
            if not isinstance(c, dict):
                raise ValueError(f"autotune: every config must be a dict of builder keyword arguments, got {c!r}")
        return configs

    def _log(self, msg):
        if self.verbose:
            print(f"[tilelang.autotune] {msg}", file=sys.stderr, flush=True)

    def get_tuner_result(self, *args, **kwargs):
        """The AutotuneResult of an earlier call with these arguments (tunes if there was none)."""
        key = (_freeze(args), _freeze(kwargs))
        if key not in self._results:
            self(*args, **kwargs)
        return self._results[key]

    def __call__(self, *args, **kwargs):
        key = (_freeze(args), _freeze(kwargs))
        if key in self._results:
            return self._results[key].kernel
        result = self.run(*args, **kwargs)
        self._results[key] = result
        return result.kernel

    def run(self, *args, **kwargs):
        configs = self._configs_for(args, kwargs)
        results = [ConfigResult(dict(c)) for c in configs]
        jit_fn = self.fn if isinstance(self.fn, JITFunction) else JITFunction(self.fn)

        # 1. Build the IR of every config here (the frontend runs Python), then compile in parallel.
        prims = [None] * len(configs)
        for i, c in enumerate(configs):
            try:
                prims[i] = jit_fn.build(*args, **kwargs, **c)
            except Exception as e:  # noqa: BLE001 - any failure skips the config
                results[i].status, results[i].message = "compile error", _short(e)
        kernels = [None] * len(configs)
        workers = max(1, min(len(configs), os.cpu_count() or 1))
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        try:
            started = {}

            def build(i):
                started[i] = time.monotonic()
                return jit_fn.compile_prim(prims[i])

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
                now = time.monotonic()
                for f in list(pending):
                    i = futures[f]
                    if i in started and now - started[i] > self.timeout:
                        results[i].status = "timeout"
                        results[i].message = f"compiling took more than {self.timeout} s"
                        f.cancel()
                        pending.discard(f)
        finally:
            # Abandoned (timed-out) builds finish in the background; their results are ignored.
            pool.shutdown(wait=False, cancel_futures=True)

        # 2. Check and time each compiled config on the same inputs.
        inputs = None
        ref_latency = None
        for i, kernel in enumerate(kernels):
            if kernel is None:
                continue
            profiler = kernel.get_profiler(self.supply_type)
            if inputs is None:
                try:
                    inputs = profiler._get_inputs()
                except Exception as e:  # noqa: BLE001
                    results[i].status, results[i].message = "run error", _short(e)
                    continue
            profiler._inputs = inputs
            try:
                if self.ref_prog is not None and not self.skip_check:
                    self._with_timeout(lambda: profiler.assert_allclose(
                        self.ref_prog, atol=self.atol, rtol=self.rtol, max_mismatched_ratio=self.max_mismatched_ratio))
                results[i].latency = self._with_timeout(
                    lambda: profiler.do_bench(warmup=self.warmup, rep=self.rep))
                if ref_latency is None and self.ref_prog is not None:
                    try:
                        ref_latency = profiler.do_bench(self.ref_prog, warmup=self.warmup, rep=self.rep)
                    except Exception:  # noqa: BLE001 - a reference that cannot be timed is fine
                        ref_latency = None
            except AssertionError as e:
                results[i].status, results[i].message = "check failed", _short(e)
            except TimeoutError as e:
                results[i].status, results[i].message = "timeout", str(e)
            except Exception as e:  # noqa: BLE001
                results[i].status, results[i].message = "run error", _short(e)
            if results[i].status == "ok":
                self._log(f"config {results[i].config}: {results[i].latency:.4f} ms")

        for r in results:
            if r.status != "ok":
                first = r.message.splitlines()[0] if r.message else ""
                self._log(f"config {r.config} skipped ({r.status}): {first}")
        ok = [i for i, r in enumerate(results) if r.status == "ok" and r.latency is not None]
        if not ok:
            details = "\n".join(f"  {r.config}: {r.status}: {r.message}" for r in results)
            raise RuntimeError(f"autotune: none of the {len(configs)} configs of "
                               f"{getattr(self, '__name__', 'the kernel')} compiled and ran correctly:\n{details}")
        best = min(ok, key=lambda i: results[i].latency)
        skipped = [r for r in results if r.status != "ok"]
        if skipped:
            self._log(f"{len(skipped)} of {len(configs)} configs skipped")
        self._log(f"best config {results[best].config}: {results[best].latency:.4f} ms")
        kernel = kernels[best]
        kernel.config = results[best].config
        kernel.latency = results[best].latency
        return AutotuneResult(kernel, results[best].config, results[best].latency, ref_latency, results)

    def _with_timeout(self, fn):
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        try:
            return pool.submit(fn).result(timeout=self.timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"running took more than {self.timeout} s") from None
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def autotune(configs=None, warmup=25, rep=100, timeout=100, ref_prog=None, atol=1e-2, rtol=1e-2, skip_check=False,
             supply_type=TensorSupplyType.Auto, max_mismatched_ratio=0.01, verbose=True):
    """Decorator stacked above @tilelang.jit. `configs`: a list of dicts of builder keyword
    arguments, or a callable taking the builder's other arguments and returning such a list."""
    if configs is None:
        raise ValueError("autotune needs configs: a list of dicts, or a callable returning one")

    def decorate(fn):
        if not callable(fn):
            raise TypeError(f"@tilelang.autotune expects a @tilelang.jit function, got {type(fn).__name__}")
        return AutoTunedFunction(fn, configs, warmup, rep, timeout, ref_prog, atol, rtol, skip_check, supply_type,
                                 max_mismatched_ratio, verbose)

    return decorate
