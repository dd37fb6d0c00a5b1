"""How do_bench times on cuda, and which framework assert_allclose hands the reference program.

Without a GPU the cuda method is checked against a recording stand-in for torch (the sequence of
flushes, events and calls, and the aggregation of the event times); on a GPU the real thing
(tests marked gpu). Regression tests of issue 11 (4): do_bench timed cuda with the wall clock around
torch.cuda.synchronize and never flushed L2; assert_allclose on cpu passed numpy arrays to
reference programs written for torch."""
import statistics
import sys
import types

import numpy as np
import pytest

import tilelang
from tilelang.profiler import do_bench
from tilelang.profiler import reference_framework

# ---- a recording stand-in for torch's CUDA API ------------------------------------------------


class _Clock:
    def __init__(self):
        self.t = 0.0
        self.log = []


class FakeTorch(types.ModuleType):
    """torch.cuda.Event / synchronize / empty(...).zero_() that log their order and keep a device
    clock: a call of the benchmarked function advances it by its next duration, a flush by 1000 ms
    (so a flush inside the timed region would show)."""

    int32, int8 = "int32", "int8"

    def __init__(self):
        super().__init__("torch")
        clock = self.clock = _Clock()
        fake = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing
                self.t = None

            def record(self, stream=None):
                self.t = clock.t
                clock.log.append(("record", id(self)))

            def synchronize(self):
                clock.log.append(("event_sync",))

            def elapsed_time(self, end):
                return end.t - self.t

        class Flush:
            def zero_(self):
                clock.t += 1000.0
                clock.log.append(("flush",))

        class Cuda(types.ModuleType):
            pass

        cuda = Cuda("torch.cuda")
        cuda.Event = Event
        cuda.synchronize = lambda device=None: clock.log.append(("sync",))
        cuda.is_available = lambda: True
        cuda.is_initialized = lambda: True
        self.cuda = cuda
        self.flush_requests = []

        def empty(n, dtype=None, device=None):
            fake.flush_requests.append((n, dtype, device))
            return Flush()
        self.empty = empty


@pytest.fixture
def fake_torch(monkeypatch):
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake


def _function(fake, durations):
    it = iter(durations)

    def fn():
        fake.clock.t += next(it)
        fake.clock.log.append(("call",))
    return fn


@pytest.mark.parametrize("mode", ["median", "mean", "min", "max"])
def test_cuda_bench_times_each_repetition_with_events_after_an_l2_flush(fake_torch, mode):
    reps = [5.0, 1.0, 9.0, 2.0, 3.0, 7.0, 4.0]
    durations = [0.5] * (1 + 5 + 2) + reps  # first call, estimate, warm-up, repetitions
    fn = _function(fake_torch, durations)
    t = do_bench(fn, _n_warmup=2, _n_repeat=len(reps), return_mode=mode, device="cuda")
    want = {"median": statistics.median(reps), "mean": statistics.fmean(reps), "min": min(reps),
            "max": max(reps)}[mode]
    assert t == pytest.approx(want)
    # 256 MiB of int32 zeroed before every repetition, outside the timed events.
    assert fake_torch.flush_requests == [(256 * 1024 * 1024 // 4, "int32", "cuda")]
    log = [e[0] for e in fake_torch.clock.log]
    tail = log[-(4 * len(reps) + 1):]
    assert tail == ["flush", "record", "call", "record"] * len(reps) + ["sync"], tail


def test_cuda_bench_quantiles_and_forced_counts(fake_torch):
    reps = [float(i) for i in range(1, 11)]
    fn = _function(fake_torch, [0.1] * (1 + 5 + 1) + reps)
    q = do_bench(fn, _n_warmup=1, _n_repeat=10, quantiles=[0.0, 0.5, 0.9], device="cuda")
    assert q == [1.0, 6.0, 10.0]


def test_bare_do_bench_uses_the_device_when_the_process_uses_cuda(fake_torch):
    fn = _function(fake_torch, [1.0] * 20)
    assert do_bench(fn, _n_warmup=1, _n_repeat=3) == pytest.approx(1.0)  # device clock, not wall clock
    assert ("flush",) in fake_torch.clock.log


def test_backend_and_device_arguments_are_checked():
    with pytest.raises(ValueError, match="backend must be one of event, cupti, cudagraph"):
        do_bench(lambda: None, backend="nvtx", device="cpu")
    with pytest.raises(ValueError, match="device must be"):
        do_bench(lambda: None, device="tpu")
    # TileLang programs pass backend=...: on cpu every backend is the wall clock.
    for backend in ("event", "cupti", "cudagraph"):
        assert do_bench(lambda: sum(range(100)), backend=backend, device="cpu", _n_repeat=3) > 0


# ---- the framework of the reference program ---------------------------------------------------

fake_torch_module = types.ModuleType("torch")
fake_torch_module.softmax = lambda x, dim: x


def torch_ref(a):
    return fake_torch_module.softmax(a, dim=-1)


def numpy_ref(a):
    return np.exp(a)


def mixed_ref(a):
    return fake_torch_module.softmax(np.asarray(a), dim=-1)


def helper_calls_torch(a):
    return torch_ref(a) * 2


def test_reference_framework_is_read_from_the_program():
    assert reference_framework(torch_ref) == "torch"
    assert reference_framework(helper_calls_torch) == "torch"
    assert reference_framework(numpy_ref) == "numpy"
    assert reference_framework(mixed_ref) == "numpy"  # converts with numpy: takes numpy
    assert reference_framework(lambda a, b: a @ b) is None
    import functools
    assert reference_framework(functools.partial(torch_ref)) == "torch"


@pytest.mark.torch
def test_cpu_assert_allclose_gives_torch_references_torch_tensors():
    import torch
    from rt_kernels import gemm

    k = tilelang.compile(gemm(64, 64, 64, 32, 32, 32), out_idx=[-1], target="cpu")
    p = k.get_profiler()

    def ref(A, B):  # a TileLang-style reference: torch methods only
        assert isinstance(A, torch.Tensor), type(A)
        return (A.float() @ B.float()).to(torch.float16)

    p.assert_allclose(ref, atol=5e-2, rtol=2e-2)
    # numpy references still get numpy arrays
    p.assert_allclose(lambda A, B: (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16), atol=5e-2,
                      rtol=2e-2)


# ---- on a GPU -----------------------------------------------------------------------------------


def _copy_kernel(n):
    import tilelang.language as T

    @T.prim_func
    def copy(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 1024), threads=256) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i]
    return tilelang.compile(copy, target="cuda")


@pytest.mark.gpu
@pytest.mark.torch
def test_gpu_event_timing_excludes_the_host_and_flushes_l2():
    import torch
    n = 4 * 1024 * 1024  # 16 MiB in, 16 MiB out: fits in an H100's 50 MB L2
    k = _copy_kernel(n)
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    t_flushed = do_bench(lambda: k(a, b), rep=50)
    torch.testing.assert_close(b, a)
    # Without flushes the data would stay in L2 (several TB/s more): a flushed run reads DRAM.
    gbps = 2 * n * 4 / (t_flushed * 1e-3) / 1e9
    assert gbps < 6000, f"{gbps:.0f} GB/s: faster than any HBM: L2 was not flushed"
    # Device time excludes host overhead: well below a synchronized wall-clock measurement of a
    # tiny launch.
    small = _copy_kernel(1024)
    x = torch.randn(1024, device="cuda")
    y = torch.empty_like(x)
    t_dev = do_bench(lambda: small(x, y), rep=20, return_mode="min")
    t_wall = do_bench(lambda: small(x, y), rep=20, return_mode="min", device="cpu", synchronize=torch.cuda.synchronize)
    assert t_dev < t_wall


@pytest.mark.gpu
@pytest.mark.torch
@pytest.mark.parametrize("backend", ["cupti", "cudagraph"])
def test_gpu_other_backends_agree_with_events(backend):
    import torch
    n = 16 * 1024 * 1024
    k = _copy_kernel(n)
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    t_event = do_bench(lambda: k(a, b), rep=50)
    t_other = do_bench(lambda: k(a, b), rep=50, backend=backend)
    assert 0.5 * t_event < t_other < 1.5 * t_event, (t_event, t_other)


@pytest.mark.gpu
@pytest.mark.torch
def test_gpu_cupti_refuses_a_function_that_launches_no_kernel():
    import torch
    torch.cuda.init()
    x = torch.randn(1000)  # host work only: CUPTI sees no kernel, so there is no device time to report
    with pytest.raises(RuntimeError, match="launched no CUDA kernel"):
        do_bench(lambda: x * 2, rep=5, backend="cupti", device="cuda")


@pytest.mark.gpu
@pytest.mark.torch
def test_gpu_profiler_times_on_the_callers_stream():
    import torch
    n = 8 * 1024 * 1024
    k = _copy_kernel(n)
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = do_bench(lambda: k(a, b), rep=30)
    torch.cuda.synchronize()
    torch.testing.assert_close(b, a)
    gbps = 2 * n * 4 / (t * 1e-3) / 1e9
    assert 50 < gbps < 6000, gbps


# ---- the cpu wall clock: time budgets for calls that outlast them ----------------------------


class _FakeWallClock:
    """perf_counter_ns for bench.py: advanced only by the benchmarked function, by `ms` a call."""

    def __init__(self, ms):
        self.ns, self.ms, self.calls = 0, ms, 0

    def __call__(self):
        return self.ns

    def fn(self):
        self.calls += 1
        self.ns += int(self.ms * 1e6)


@pytest.mark.parametrize("ms,warmup,rep,expected_calls", [
    (20_000.0, 500, 100, 2),  # one call outlasts the whole budget: one untimed, one timed call
    (50.0, 25, 100, 1 + 3),  # 3 estimate calls use the 125 ms: they are the repetitions
    (1.0, 25, 100, 1 + 5 + 25 + 100),  # short calls: TileLang's counts (estimate, warm-up, repetitions)
])
def test_cpu_bench_spends_its_time_budget_once(monkeypatch, ms, warmup, rep, expected_calls):
    import tilelang.profiler.bench as bench
    clock = _FakeWallClock(ms)
    monkeypatch.setattr(bench.time, "perf_counter_ns", clock)
    got = do_bench(clock.fn, warmup=warmup, rep=rep, device="cpu", return_mode="mean")
    assert clock.calls == expected_calls
    assert got == pytest.approx(ms)  # every timed call is a whole call


def test_cpu_bench_forced_counts_are_honoured_for_long_calls(monkeypatch):
    import tilelang.profiler.bench as bench
    clock = _FakeWallClock(20_000.0)
    monkeypatch.setattr(bench.time, "perf_counter_ns", clock)
    assert do_bench(clock.fn, _n_warmup=2, _n_repeat=3, device="cpu") == pytest.approx(20_000.0)
    assert clock.calls == 1 + 5 + 2 + 3
