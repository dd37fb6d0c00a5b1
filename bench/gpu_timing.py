"""CUDA-event timing shared by every GPU benchmark, torch only (no tilelang import), so that a
process running another tilelang implementation (bench/gpu_vs_tilelang.py) times kernels exactly as
ours are timed: median of repetitions, L2 flushed before each.
"""
import statistics
import time

import torch

_FLUSH = None


def flush_l2():
    global _FLUSH
    if _FLUSH is None:
        _FLUSH = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    _FLUSH.zero_()


def bench(fn, warmup=5, rep=30, flush=True, max_seconds=6.0):
    """Median device time of fn() in milliseconds (CUDA events around each call)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    t_start = time.time()
    for _ in range(rep):
        if flush:
            flush_l2()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
        if time.time() - t_start > max_seconds and len(times) >= 5:
            break
    return statistics.median(times)
