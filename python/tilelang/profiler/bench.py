"""Benchmarking (tilelang.profiler.do_bench).

cuda: CUDA events recorded on the current torch stream (the stream tilelang kernels launch on), one
start/end pair per repetition, the L2 cache flushed (a `cache_size` MiB buffer zeroed) before each
repetition, warm-up excluded — the method of TileLang and Triton. backend="cupti" reads the kernels'
device times from torch's profiler (CUPTI), so host launch gaps do not count; "cudagraph" replays the
repetitions captured in one CUDA graph. cpu: the wall clock around each call.
"""
import statistics
import sys
import time

_RETURN_MODES = ("min", "max", "mean", "median")
_BACKENDS = ("event", "cupti", "cudagraph")
_FLUSH_ANNOTATION = "tilelang::l2_flush"


def _aggregate(times, quantiles, return_mode):
    if quantiles is not None:
        ordered = sorted(times)
        qs = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
        return qs
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "mean":
        return statistics.fmean(times)
    return statistics.median(times)


def _counts(estimate_ms, warmup, rep, n_warmup, n_repeat):
    estimate_ms = max(estimate_ms, 1e-6)
    nw = n_warmup if n_warmup > 0 else max(1, int(warmup / estimate_ms))
    nr = n_repeat if n_repeat > 0 else max(1, int(rep / estimate_ms))
    return min(nw, 1_000_000), min(nr, 1_000_000)


def _cuda_in_use():
    """True when the process uses CUDA through torch (then a bare do_bench times on the device)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_available() and torch.cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a broken CUDA install: time on the host
        return False


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, quantiles=None, fast_flush=True, backend="event",
             return_mode="median", device=None, cache_size=256, synchronize=None, early_stop_baseline=None):
    """Runs `fn()` repeatedly and returns the time of one call in milliseconds.

    warmup / rep: time budgets in ms (as in TileLang and Triton); the call counts come from a
    5-call estimate; _n_warmup / _n_repeat force them (cpu: a call that alone outlasts
    warmup + rep is timed once after one untimed call; see _bench_wallclock). return_mode: "min", "max", "mean" or
    "median" of the repetitions; quantiles=[...] returns those quantiles instead.
    device: "cuda" (CUDA events, L2 flushed before each repetition), "cpu" (wall clock), or None:
    cuda when the process already uses CUDA through torch, else cpu. backend (cuda): "event",
    "cupti" (kernel time from torch's CUPTI profiler: the mean per call) or "cudagraph"; on cpu
    every backend is the wall clock. fast_flush / cache_size: the flush buffer (int32 / int8
    elements, MiB). synchronize: called after each call before the clock stops (cpu timing of
    asynchronous work)."""
    if return_mode not in _RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(_RETURN_MODES)}; got {return_mode!r}")
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(_BACKENDS)}; got {backend!r}")
    if quantiles is not None and not all(0 <= q <= 1 for q in quantiles):
        raise ValueError(f"quantiles must lie in [0, 1]; got {quantiles!r}")
    kind, index = _device_kind(device)
    if kind == "cpu":
        return _bench_wallclock(fn, warmup, rep, _n_warmup, _n_repeat, quantiles, return_mode, synchronize)
    if index is None:
        return _bench_cuda(fn, warmup, rep, _n_warmup, _n_repeat, quantiles, fast_flush, backend, return_mode,
                           cache_size)
    import torch
    with torch.cuda.device(index):
        return _bench_cuda(fn, warmup, rep, _n_warmup, _n_repeat, quantiles, fast_flush, backend, return_mode,
                           cache_size)


def _device_kind(device):
    """("cpu" | "cuda", CUDA device index or None) for do_bench's `device` argument: None, "cpu",
    "cuda", "cuda:1", a device index (TileLang's form) or a torch.device."""
    if device is None:
        return ("cuda" if _cuda_in_use() else "cpu"), None
    if isinstance(device, bool):
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:<index>', an index or a torch.device; got {device!r}")
    if isinstance(device, int):
        return "cuda", device
    kind = getattr(device, "type", None)  # torch.device
    if kind is not None:
        return ("cpu", None) if kind == "cpu" else ("cuda", device.index)
    if isinstance(device, str):
        if device == "cpu":
            return "cpu", None
        if device == "cuda":
            return "cuda", None
        if device.startswith("cuda:") and device[5:].isdigit():
            return "cuda", int(device[5:])
    raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:<index>', an index or a torch.device; got {device!r}")


def _bench_wallclock(fn, warmup, rep, n_warmup, n_repeat, quantiles, return_mode, synchronize):
    """cpu: the first call is never timed (one-time costs: compilation, first touch of memory); then
    up to 5 calls are timed one by one to estimate a call's time, and the warm-up and repetition
    counts follow from it as on cuda. When the estimate calls alone have used the whole time budget
    (`warmup` + `rep` ms: a call longer than it, e.g. a 4096² attention on two cores), the budget is
    spent: those warm calls are the repetitions and the result is their time (no further calls).
    Every timed call is a whole call; forced counts (_n_warmup / _n_repeat) are always honoured."""
    sync = synchronize or (lambda: None)
    clock = time.perf_counter_ns
    fn()
    sync()
    budget_ms = warmup + rep
    forced = n_warmup > 0 or n_repeat > 0
    estimate = []
    while len(estimate) < 5:
        start = clock()
        fn()
        sync()
        estimate.append((clock() - start) / 1e6)
        if not forced and sum(estimate) >= budget_ms:
            return _aggregate(estimate, quantiles, return_mode)
    nw, nr = _counts(sum(estimate) / len(estimate), warmup, rep, n_warmup, n_repeat)
    for _ in range(nw):
        fn()
    sync()
    times = [0.0] * nr
    for i in range(nr):
        start = clock()
        fn()
        sync()
        times[i] = (clock() - start) / 1e6
    return _aggregate(times, quantiles, return_mode)


def _bench_cuda(fn, warmup, rep, n_warmup, n_repeat, quantiles, fast_flush, backend, return_mode, cache_size):
    try:
        import torch
    except ImportError as e:
        raise NotImplementedError("not implemented: do_bench on cuda without PyTorch (CUDA events and the L2 flush "
                                  "use torch); install torch, or pass device='cpu' for wall-clock timing") from e
    fn()
    torch.cuda.synchronize()
    elems = cache_size * 1024 * 1024 // (4 if fast_flush else 1)
    flush = torch.empty(elems, dtype=torch.int32 if fast_flush else torch.int8, device="cuda")

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        fn()
    end.record()
    end.synchronize()
    nw, nr = _counts(start.elapsed_time(end) / 5, warmup, rep, n_warmup, n_repeat)
    for _ in range(nw):
        fn()

    if backend == "cupti":
        return _cupti_mean_ms(torch, fn, flush, nr)
    if backend == "cudagraph":
        times = _cudagraph_times(torch, fn, flush, nr)
        return _aggregate(times, quantiles, return_mode)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(nr)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(nr)]
    for i in range(nr):
        flush.zero_()  # before the start event: not timed, and every repetition starts with a cold L2
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return _aggregate([s.elapsed_time(e) for s, e in zip(starts, ends)], quantiles, return_mode)


def _cupti_mean_ms(torch, fn, flush, n_repeat):
    """Mean device time per call of the kernels `fn` launches, from torch's profiler (CUPTI): the
    flush kernels (inside the annotation) are subtracted; launch gaps never count."""
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(n_repeat):
            with torch.profiler.record_function(_FLUSH_ANNOTATION):
                flush.zero_()
            fn()
        torch.cuda.synchronize()
    total = flushed = 0.0
    for ev in prof.events():
        if getattr(getattr(ev, "device_type", None), "name", "") != "CUDA":
            continue
        if getattr(ev, "is_user_annotation", False):
            if ev.key == _FLUSH_ANNOTATION:
                flushed += ev.self_device_time_total
            continue
        total += ev.self_device_time_total
    if total <= 0:
        raise RuntimeError("do_bench(backend='cupti'): torch's profiler recorded no CUDA kernel time (is CUPTI "
                           "available?); use backend='event'")
    if total - flushed <= 0:
        raise RuntimeError("do_bench(backend='cupti'): the timed function launched no CUDA kernel (CUPTI times "
                           "kernels only: work on the host is not seen); use backend='event' or device='cpu'")
    return (total - flushed) / n_repeat / 1e3


def _cudagraph_times(torch, fn, flush, n_repeat, replays=10):
    """Per-call times of `replays` replays of a CUDA graph holding `n_repeat` calls (L2 flushed
    before each replay, outside the graph)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(n_repeat):
                fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(replays):
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            graph.replay()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) / n_repeat)
    torch.cuda.current_stream().wait_stream(stream)
    return times
