"""Wall-clock benchmarking (tilelang.profiler.do_bench)."""
import statistics
import time

_RETURN_MODES = ("min", "max", "mean", "median")


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, quantiles=None, fast_flush=True, backend="event",
             return_mode="median", device=None, cache_size=256, early_stop_baseline=None, synchronize=None):
    """Runs `fn()` repeatedly and returns its time in milliseconds.

    warmup / rep are time budgets in ms (as in triton/TileLang): the number of calls is derived
    from a first estimate; _n_warmup / _n_repeat force call counts. `synchronize` (optional) is
    called after each call before the clock stops, for asynchronous devices. `quantiles` returns a
    list of quantiles of the per-call times instead of `return_mode`. `fast_flush`, `backend`
    ("event", "cupti", "cudagraph"), `device`, `cache_size` and `early_stop_baseline` are accepted
    for TileLang compatibility; the timing is the same for every backend (on cuda, call
    `synchronize` — torch.cuda.synchronize when torch tensors are on the GPU)."""
    if synchronize is None:
        synchronize = _cuda_sync_if_needed()
    if return_mode not in _RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(_RETURN_MODES)}; got {return_mode!r}")
    sync = synchronize or (lambda: None)
    clock = time.perf_counter_ns

    fn()
    sync()
    # Estimate one call's duration from a few calls.
    t0 = clock()
    n_est = 5
    for _ in range(n_est):
        fn()
    sync()
    estimate_ms = max((clock() - t0) / n_est / 1e6, 1e-6)
    n_warmup = _n_warmup if _n_warmup > 0 else max(1, int(warmup / estimate_ms))
    n_repeat = _n_repeat if _n_repeat > 0 else max(1, int(rep / estimate_ms))
    n_repeat = min(n_repeat, 1_000_000)
    n_warmup = min(n_warmup, 1_000_000)

    for _ in range(n_warmup):
        fn()
    sync()
    times = [0.0] * n_repeat
    for i in range(n_repeat):
        start = clock()
        fn()
        sync()
        times[i] = (clock() - start) / 1e6

    if quantiles is not None:
        ordered = sorted(times)
        return [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "mean":
        return statistics.fmean(times)
    return statistics.median(times)


def _cuda_sync_if_needed():
    """torch.cuda.synchronize when torch is loaded and a GPU is in use, else None."""
    import sys
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.synchronize
    except Exception:  # noqa: BLE001 - a CPU-only torch or a shim
        return None
    return None
