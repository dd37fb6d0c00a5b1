"""cpu host costs around a kernel: per-call launch overhead of tiny kernels, warm compile (in-process
memo hit, on-disk cache hit), and cold compile of GEMM kernels (lowering, C++ emission, g++).

Launch overhead is the wall time of one `kernel(a, b, c)` call from Python for a kernel whose body
is negligible (128 floats), averaged over many calls; the 1-block grid runs inline on the caller,
the 16-block grid goes through the worker pool. For scale, numpy's `np.add(a, b, out=c)` on the
same 128 floats is timed alongside. Cold compiles use a private, empty kernel cache."""
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import cpu_gemm  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402


def tiny_add(n, blocks):
    block = n // blocks

    @T.prim_func
    def add(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(blocks, threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return add


def halves_dynamic():
    """B[i] = A[2 * i] + A[2 * i + 1]: A's dimension is the expression 2 * n of the dynamic n, so every
    call evaluates a shape expression on the call path (runtime/args.cc through ir/eval.h)."""
    n = T.dynamic("n")

    @T.prim_func
    def halves(A: T.Tensor((2 * n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                B[i] = A[2 * i] + A[2 * i + 1]
    return halves


def per_call_us(fn, calls=20000, rounds=7):
    """Median over rounds of the mean time of `calls` back-to-back calls, in microseconds."""
    for _ in range(calls // 10):
        fn()
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter_ns() - t0) / calls / 1e3)
    return statistics.median(samples)


def timed_ms(fn, repeat=20):
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(samples)


class DLPackOnly:
    """A tensor that speaks only DLPack (no buffer protocol, not a torch.Tensor): the generic import
    through nanobind's ndarray, the path cupy and jax arrays take."""

    def __init__(self, array):
        self._a = array

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def launch_rows(table):
    """Per-call host cost of `kernel(a, b, c)` for each way a tensor reaches the call path: numpy
    (buffer protocol), torch (DLPack C exchange API, or attributes when it is switched off by
    TILELANG_TORCH_NO_EXCHANGE_API=1 in a child process) and a DLPack-only object."""
    a, b, c = (np.random.default_rng(0).standard_normal(128, dtype=np.float32) for _ in range(3))
    kernels = {blocks: tilelang.compile(tiny_add(128, blocks), target="cpu") for blocks in (1, 16)}
    for blocks, k in kernels.items():
        k(a, b, c)
        np.testing.assert_array_equal(c, a + b)
        us = per_call_us(lambda: k(a, b, c))
        table.add(f"launch, 3 tensors, {blocks}-block grid", us, "us/call", "<= 5",
                  "inline on the caller" if blocks == 1 else "worker pool hand-off")
    kd = tilelang.compile(halves_dynamic(), target="cpu")
    a2, h = np.random.default_rng(1).standard_normal(256, dtype=np.float32), np.zeros(128, np.float32)
    kd(a2, h)
    np.testing.assert_allclose(h, a2[0::2] + a2[1::2], rtol=1e-6)
    table.add("launch, 2 tensors with shapes (2*n,), (n,)", per_call_us(lambda: kd(a2, h)), "us/call", "<= 5",
              "a shape expression evaluated per call")
    table.add("numpy np.add(a, b, out=c), 128 floats", per_call_us(lambda: np.add(a, b, out=c)), "us/call", "", "scale")
    k = kernels[1]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        ta, tb, tc = (torch.from_numpy(x.copy()) for x in (a, b, c))
        k(ta, tb, tc)
        np.testing.assert_array_equal(tc.numpy(), a + b)
        path = "attributes" if os.environ.get("TILELANG_TORCH_NO_EXCHANGE_API") else "DLPack C exchange API"
        table.add("launch, 3 torch tensors, 1-block grid", per_call_us(lambda: k(ta, tb, tc)), "us/call", "<= 5",
                  path)
    da, db, dc = (DLPackOnly(x) for x in (a, b, c.copy()))
    k(da, db, dc)
    np.testing.assert_array_equal(dc._a, a + b)
    table.add("launch, 3 DLPack-only tensors, 1-block grid", per_call_us(lambda: k(da, db, dc)), "us/call", "",
              "nanobind ndarray import")


def main():
    if "--launch" in sys.argv:  # launch rows only (seconds, not minutes): before/after a call-path change
        table = common.Table("launch_cpu", "cpu launch host cost per call", ["what", "value", "unit", "goal", "note"])
        launch_rows(table)
        m = common.machine()
        table.note(f"{m['cpu']}; load average at the end {m['load_average']:.1f}")
        table.finish()
        return table
    table = common.Table("cpu_overhead", "cpu host costs (goals: launch <= 5 us, warm cache hit <= 1 ms, "
                         "cold GEMM compile <= 1.5 s)", ["what", "value", "unit", "goal", "note"])
    launch_rows(table)

    # Warm compiles of a GEMM kernel that is already built.
    f = cpu_gemm.matmul(1024, 1024, 1024, 128, 256, 64)
    tilelang.compile(f, target="cpu")
    table.add("compile, in-process memo hit", timed_ms(lambda: tilelang.compile(f, target="cpu")), "ms", "<= 1", "")

    def disk_hit():
        tilelang._core.clear_memo()
        k = tilelang.compile(f, target="cpu")
        assert k.cache_hit
    table.add("compile, on-disk cache hit (memo cleared)", timed_ms(disk_hit), "ms", "<= 1",
              "hash, validate, dlopen")

    # Cold compiles in an empty private cache.
    old = os.environ.get("TILELANG_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="tl_cold_") as cache:
        os.environ["TILELANG_CACHE_DIR"] = cache
        try:
            for dtype, acc in (("float32", "float32"), ("bfloat16", "float32"), ("float16", "float32")):
                walls, compiler = [], []
                for rep in range(3):
                    tilelang._core.clear_memo()
                    g = cpu_gemm.matmul(1024 + 8 * rep, 1024, 1024, 128, 256, 64, dtype=dtype, accum_dtype=acc)
                    t0 = time.perf_counter()
                    k = tilelang.compile(g, target="cpu")
                    walls.append(time.perf_counter() - t0)
                    compiler.append(k.compile_seconds)
                    assert not k.cache_hit
                table.add(f"cold compile, {dtype} GEMM kernel", statistics.median(walls), "s", "<= 1.5",
                          "lower + emit + g++ + load, median of 3")
        finally:
            if old is None:
                os.environ.pop("TILELANG_CACHE_DIR", None)
            else:
                os.environ["TILELANG_CACHE_DIR"] = old
            tilelang._core.clear_memo()
    m = common.machine()
    table.note(f"{m['cpu']}; {m['compiler']}; load average at the end {m['load_average']:.1f}")
    table.finish()
    return table


if __name__ == "__main__":
    main()
