"""Shared helpers for the benchmarks in bench/: timing, the machine, one printed table, JSON results.

Every benchmark measures a ratio against a peer timed in the same process, by the same method
(tilelang.profiler.do_bench: wall clock, warm-up excluded, median), with the two interleaved over
several rounds so that load from other processes hits both alike; correctness is checked on the same
inputs first. Results go to bench/results/<name>.json; docs/PERFORMANCE.md keeps the latest tables.
"""
import datetime
import json
import contextlib
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
PERF_DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("TILELANG_SOURCE_DIR", ROOT)

# Variables that make a peer library run below its speed: OpenBLAS's forced core type and L2 size
# (some machines here set OPENBLAS_CORETYPE to an older core: Haswell runs ~2/3, Sandybridge ~2/5 of
# the AVX-512 kernels' rate), MKL's and oneDNN's instruction-set caps, ATen's vector capability.
# A benchmark process never measures a peer with any of them set: it re-executes itself without them
# (peer_env_clean below), before any peer library is loaded.
PEER_SLOWING_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_VERBOSE", "MKL_ENABLE_INSTRUCTIONS",
                    "MKL_DEBUG_CPU_TYPE", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA",
                    "ONEDNN_CPU_ISA_HINTS", "ATEN_CPU_CAPABILITY")


def clean_peer_env(env=None):
    """A copy of `env` (default os.environ) without PEER_SLOWING_ENV."""
    env = dict(os.environ if env is None else env)
    for v in PEER_SLOWING_ENV:
        env.pop(v, None)
    return env


def ensure_clean_peer_process():
    """Re-executes this benchmark in a clean process when the environment has a variable that slows a
    peer (OPENBLAS_CORETYPE, ...): OpenBLAS and MKL read them once, when loaded, so they cannot be
    undone in-process. The removed names are kept in TL_BENCH_REMOVED_ENV for the record."""
    bad = [v for v in PEER_SLOWING_ENV if v in os.environ]
    if not bad or os.environ.get("TL_BENCH_NO_REEXEC"):
        return
    env = clean_peer_env()
    env["TL_BENCH_REMOVED_ENV"] = ",".join(bad)
    env["TL_BENCH_NO_REEXEC"] = "1"  # never loop
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


# Only a benchmark script run from bench/ is re-executed (tests that import these helpers are not).
if sys.argv and sys.argv[0] and os.path.dirname(os.path.abspath(sys.argv[0])) == HERE:
    ensure_clean_peer_process()


def do_bench(fn, warmup=25, rep=100):
    """Median wall-clock milliseconds of fn() (tilelang.profiler.do_bench; warmup / rep are time
    budgets in ms). Two untimed warm-up calls are forced after do_bench's five estimate calls: with
    a budget shorter than a few calls, do_bench would otherwise time the estimate calls themselves,
    the first of them right after an idle pause, when the worker threads of a pool that sleeps
    (ours after 50 us) may still be waking; on the 2-vCPU Zen 4 that read a 2-thread decode GEMM
    at 0.66-0.70x OpenBLAS with `--rep 5` and 1.31x with `--rep 100` (2026-11-28)."""
    from tilelang.profiler import do_bench as tl_do_bench
    return tl_do_bench(fn, warmup=warmup, rep=rep, return_mode="median", _n_warmup=2)


class Timings(dict):
    """{name: median ms} from `interleaved`, with the per-round samples kept for paired ratios."""

    def __init__(self, samples):
        super().__init__({name: statistics.median(ts) for name, ts in samples.items()})
        self.samples = samples

    def ratio(self, peer, ours):
        """Median over rounds of peer_time / ours_time measured in the same round: a paired ratio,
        steadier than the ratio of medians when other processes make the machine's speed drift."""
        return self.paired(lambda t: t[peer] / t[ours])

    def paired(self, fn):
        """Median over rounds of fn({name: ms in that round})."""
        n = len(next(iter(self.samples.values())))
        return statistics.median(fn({k: v[i] for k, v in self.samples.items()}) for i in range(n))


def running_tasks():
    """Runnable tasks on the machine now (the 4th field of /proc/loadavg, this process included)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 1


def wait_for_idle(max_wait_s=5.0, quiet_samples=10):
    """Waits (at most max_wait_s) until no other task has been runnable for `quiet_samples`
    consecutive 20 ms polls: on a machine shared with builds this keeps most measurements out of
    bursts of other work. Returns the seconds waited."""
    t0 = time.time()
    quiet = 0
    while quiet < quiet_samples and time.time() - t0 < max_wait_s:
        quiet = quiet + 1 if running_tasks() <= 1 else 0
        time.sleep(0.02)
    return time.time() - t0


def thread_cpu_bench(fn, warmup=3, rep=20):
    """Median CPU time (ms) of the calling thread per fn() call: for single-threaded contenders that
    compute on the caller (ours with tl.cpu_num_threads=1, OpenBLAS and MKL limited to 1 thread), a
    measure that time slices given to other processes on an overloaded machine do not inflate
    (their cache pollution still does)."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(rep):
        t0 = time.thread_time_ns()
        fn()
        ts.append((time.thread_time_ns() - t0) * 1e-6)
    return statistics.median(ts)


def add_cpu_timing_args(ap, rounds, rep):
    """The options every cpu benchmark takes: --threads (ours via tl.cpu_num_threads and the peers),
    --rounds of interleaved timing, --rep calls per timing, --timer wall | thread_cpu (the latter
    with --threads 1: see thread_cpu_bench)."""
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--rep", type=int, default=rep)
    ap.add_argument("--timer", choices=["wall", "thread_cpu"], default="wall",
                    help="thread_cpu: the calling thread's CPU time per call (needs --threads 1)")


def add_old_build_args(ap):
    """--old-include DIR / --old-env NAME=VALUE: also build every kernel a second way (an earlier
    tree's headers, or a build-time environment variable such as TL_CPU_VECTOR_WIDTH=256 set while
    it compiles; the kernel cache keys on both) and time it in the same rounds as ours."""
    ap.add_argument("--old-include", default=None, metavar="DIR",
                    help="the second build uses the headers in DIR (an earlier tree's include/, e.g. from "
                         "`git archive <commit> include | tar -x -C <dir>`)")
    ap.add_argument("--old-env", action="append", default=[], metavar="NAME=VALUE",
                    help="the second build runs with NAME=VALUE in the environment (repeatable)")
    ap.add_argument("--old-config", action="append", default=[], metavar="KEY=VALUE",
                    help="the second build also gets pass config KEY (true/false, an integer or a string), e.g. "
                         "tl.disable_cpu_convert_rows=true for headers older than that pass (repeatable)")


def _name_values(items, option):
    """{NAME: VALUE} from NAME=VALUE strings (a ValueError naming `option` for another form)."""
    pairs = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"{option} takes NAME=VALUE, got {item!r}")
        pairs[name] = value
    return pairs


def _config_value(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    return int(text) if text.lstrip("-").isdigit() else text


def old_build(args):
    """(environment, pass configs) of the second build from add_old_build_args' options; None when
    none was given."""
    env = _name_values(args.old_env, "--old-env")
    if args.old_include:
        env["TILELANG_INCLUDE_DIR"] = args.old_include
    configs = {k: _config_value(v) for k, v in _name_values(args.old_config, "--old-config").items()}
    return (env, configs) if env or configs else None


@contextlib.contextmanager
def environment(overrides):
    """Sets `overrides` in os.environ for the block and restores the earlier values after it."""
    saved = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def interleaved(fns, rounds=5, warmup=25, rep=100, timer="wall"):
    """Timings of several callables measured in alternation, `rounds` times each (each round after
    a short wait for the machine to be idle): a burst of load from other processes on this shared
    machine then hits every contender, not just one. timer="thread_cpu" uses thread_cpu_bench."""
    samples = {name: [] for name in fns}
    bench = do_bench if timer == "wall" else thread_cpu_bench
    for _ in range(rounds):
        wait_for_idle()
        for name, fn in fns.items():
            samples[name].append(bench(fn, warmup=warmup, rep=rep))
    return Timings(samples)


# ---- the CPU and the peers' kernels --------------------------------------------------------------

ISA_FLAGS = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16",
             "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16")
LEVEL_RANK = {"sse": 0, "avx": 1, "avx2": 2, "avx512": 3}


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^flags\s*:\s*(.*)$", f.read(), re.M)
        return set(m.group(1).split()) if m else set()
    except OSError:
        return set()


def cpu_isa_features(flags=None):
    """The ISA features a GEMM peer may use that this CPU reports, in ISA_FLAGS order."""
    flags = cpu_flags() if flags is None else flags
    return [f for f in ISA_FLAGS if f in flags]


def cpu_vector_level(flags=None):
    """sse | avx | avx2 | avx512: the widest fp32 FMA tier of this CPU."""
    flags = cpu_flags() if flags is None else flags
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "avx" if "avx" in flags else "sse"


# OpenBLAS DYNAMIC_ARCH core names (lower case) and the fp32 tier of their kernels.
OPENBLAS_CORE_LEVEL = {
    "sapphirerapids": "avx512", "cooperlake": "avx512", "skylakex": "avx512",
    "haswell": "avx2", "zen": "avx2", "excavator": "avx2",
    "sandybridge": "avx", "bulldozer": "avx", "piledriver": "avx", "steamroller": "avx",
}


def openblas_peer():
    """numpy's BLAS: {internal_api, version, architecture, num_threads, level} from threadpoolctl
    (its `architecture` is OpenBLAS's core name), else from OpenBLAS's own get_corename."""
    import numpy as np  # noqa: F401  (loads the BLAS)
    info = None
    try:
        import threadpoolctl
        for lib in threadpoolctl.threadpool_info():
            if lib.get("user_api") == "blas" and "numpy" in lib.get("filepath", ""):
                info = {k: lib.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                info["source"] = "threadpoolctl"
                break
    except ImportError:
        pass
    if info is None:
        import ctypes
        import glob
        for path in glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "*openblas*")):
            lib = ctypes.CDLL(path)
            for sym in ("scipy_openblas_get_corename64_", "openblas_get_corename64_", "openblas_get_corename"):
                if hasattr(lib, sym):
                    fn = getattr(lib, sym)
                    fn.restype = ctypes.c_char_p
                    info = {"internal_api": "openblas", "version": None, "architecture": fn().decode(),
                            "num_threads": None, "source": "openblas_get_corename (no threadpoolctl)"}
                    break
    if info is None:
        return {"internal_api": "unknown", "architecture": "unknown", "level": "unknown", "source": "none"}
    arch = (info.get("architecture") or "").lower()
    info["level"] = OPENBLAS_CORE_LEVEL.get(arch, "sse" if arch else "unknown")
    return info


TORCH_PROBE = r"""
import torch
torch.set_num_threads(2)
a = torch.randn(64, 64); b = torch.randn(64, 64)
torch.matmul(a, b)
torch.matmul(a.bfloat16(), b.bfloat16())
print("TL_PROBE f16mm", flush=True)
torch.matmul(a.half(), b.half())
print("TL_PROBE int8_mm", flush=True)
torch._int_mm(torch.ones(64, 64, dtype=torch.int8), torch.ones(64, 64, dtype=torch.int8))
try:
    print("TL_PROBE qlinear", flush=True)
    torch.backends.quantized.engine = "onednn"
    ql = torch.ao.nn.quantized.Linear(64, 64, bias_=False)
    ql(torch.quantize_per_tensor(torch.rand(64, 64), 0.02, 0, torch.quint8))
except Exception as e:
    print("TL_PROBE qlinear failed", e, flush=True)
print("TL_TORCH", torch.__version__, torch.backends.cpu.get_cpu_capability(), flush=True)
"""


def torch_peer():
    """torch's kernels, read in a clean child process with MKL_VERBOSE / ONEDNN_VERBOSE on: the MKL
    build line names the instruction set MKL dispatches to (fp32 matmul), oneDNN's exec line names
    the bf16 matmul implementation (e.g. brg_matmul:avx10_1_512_amx). None without torch."""
    try:
        import importlib.util
        if importlib.util.find_spec("torch") is None:
            return None
    except Exception:
        return None
    env = clean_peer_env()
    env.update(MKL_VERBOSE="1", ONEDNN_VERBOSE="1")
    r = subprocess.run([sys.executable, "-c", TORCH_PROBE], env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    info = {"version": None, "aten_capability": None, "mkl": None, "fp32_level": "unknown", "bf16_impl": None}
    m = re.search(r"^TL_TORCH (\S+) (\S+)", out, re.M)
    if m:
        info["version"], info["aten_capability"] = m.group(1), m.group(2)
    m = re.search(r"^MKL_VERBOSE (oneMKL|Intel\(R\) MKL) (.*?) for Intel\(R\) 64 architecture (.*?)(, Lnx|$)", out, re.M)
    if m:
        info["mkl"] = f"{m.group(1)} {m.group(2)}: {m.group(3)}"
        isa = m.group(3)
        info["fp32_level"] = ("avx512" if "AVX-512" in isa or "AVX10" in isa else "avx2" if "AVX2" in isa else
                              "avx" if "AVX" in isa else "sse")
        info["fp32_impl"] = "MKL sgemm"
    m = re.search(r"^onednn_verbose,.*?exec,cpu,matmul,([^,]+),", out, re.M)
    if m:
        info["bf16_impl"] = m.group(1)
    # int8: torch._int_mm (s8 x s8 -> s32 through oneDNN's gemm API, whose verbose line names no
    # instruction set) and a quantized linear on the onednn engine (u8 x s8 through oneDNN's matmul,
    # e.g. brg_matmul:avx10_1_512_amx, weights packed once when set)
    segments = {seg.split("\n", 1)[0].strip(): seg for seg in out.split("TL_PROBE ")[1:]}
    for key, marker in (("f16_impl", "f16mm"), ("int8_mm_impl", "int8_mm"), ("qlinear_impl", "qlinear")):
        info[key] = None
        for line in segments.get(marker, "").splitlines():
            f = line.split(",")
            if line.startswith("onednn_verbose,") and "exec" in f and f[f.index("exec") + 2] != "reorder":
                i = f.index("exec")
                info[key] = f[i + 2] + (":" + f[i + 3] if f[i + 3] else "")
                break
    return info


def fp32_peer_refusal(peer_level, cpu_level=None):
    """None when a ratio against an fp32 peer whose kernels are of tier `peer_level` is honest on this
    CPU; else why not (the peer runs an older core type than the CPU supports, or it is unknown)."""
    cpu_level = cpu_level or cpu_vector_level()
    if peer_level not in LEVEL_RANK:
        return f"peer kernel tier unknown ({peer_level}); CPU supports {cpu_level}"
    if LEVEL_RANK[peer_level] < LEVEL_RANK[cpu_level]:
        return f"peer runs {peer_level} kernels, CPU supports {cpu_level}"
    return None


def bf16_peer_refusal(impl, flags=None):
    """None when a bf16 peer implementation (oneDNN name) uses the best bf16 units of this CPU."""
    flags = cpu_flags() if flags is None else flags
    if not impl:
        return "peer bf16 implementation unknown"
    if "amx_bf16" in flags and "amx" not in impl:
        return f"peer bf16 runs '{impl}', CPU has AMX-BF16"
    if "avx512_bf16" in flags and not any(s in impl for s in ("amx", "bf16", "avx10")):
        return f"peer bf16 runs '{impl}', CPU has AVX512-BF16"
    return None


def f16_peer_refusal(impl, flags=None):
    """None when a float16 peer implementation (oneDNN primitive:name) uses this CPU's float16 units,
    which it must name: AMX where the CPU has AMX-FP16, AVX512-FP16 (avx512_core_fp16 / AVX10)
    where it has that; on other CPUs oneDNN converts to float32, any AVX-512 or AVX2 kernel will do.
    torch's float16 matmul outside oneDNN (no verbose line) is refused."""
    flags = cpu_flags() if flags is None else flags
    if not impl:
        return "peer float16 matmul does not run oneDNN (implementation unknown)"
    if "amx_fp16" in flags and "amx" not in impl:
        return f"peer float16 runs '{impl}', CPU has AMX-FP16"
    if "avx512_fp16" in flags and not any(s in impl for s in ("amx", "fp16", "avx10")):
        return f"peer float16 runs '{impl}', CPU has AVX512-FP16"
    return None


def int8_peer_refusal(impl, flags=None):
    """None when an int8 peer implementation (oneDNN primitive:name) uses the best int8 units of this
    CPU, which it must name: AMX where the CPU has AMX-INT8, else AVX512-VNNI / AVX10."""
    flags = cpu_flags() if flags is None else flags
    if not impl:
        return "peer int8 implementation unknown"
    if "amx_int8" in flags and "amx" not in impl:
        return f"peer int8 runs '{impl}', which names no AMX; CPU has AMX-INT8"
    if "avx512_vnni" in flags and not any(s in impl for s in ("amx", "vnni", "avx10")):
        return f"peer int8 runs '{impl}', which names no VNNI; CPU has AVX512-VNNI"
    return None


def fma_probe():
    """bench/cpu_fp32_ceiling/peak.cc built with the system compiler (-O2 -march=native) and loaded, or
    None when no compiler is available."""
    import ctypes
    import tempfile
    src = os.path.join(HERE, "cpu_fp32_ceiling", "peak.cc")
    with tempfile.TemporaryDirectory() as d:  # the loaded object outlives its file
        so = os.path.join(d, "peak.so")
        try:
            subprocess.run([os.environ.get("CXX", "g++").split()[0], "-O2", "-march=native", "-ffp-contract=fast",
                            "-fPIC", "-shared", src, "-o", so], check=True, capture_output=True, timeout=120)
            lib = ctypes.CDLL(so)
        except (OSError, subprocess.SubprocessError):
            return None
    lib.tl_bench_fma_chains.restype = ctypes.c_double
    lib.tl_bench_fma_chains.argtypes = [ctypes.c_long, ctypes.c_float]
    return lib


def fp32_fma_peak(probes=7, seconds=0.03, lib=None):
    """The fp32 multiply-add peak of the calling thread's core, measured now: the best rate (GFLOP/s) of
    `probes` runs of bench/cpu_fp32_ceiling/peak.cc (independent chains of vector FMAs), each about
    `seconds` of thread CPU time. The best, not the median: other tenants only ever slow a probe down.
    None when no compiler is available. A GEMM's rate divided by it says how far from the hardware's
    ceiling the GEMM runs, which bounds any ratio between two GEMMs (against a peer at 93% of the
    peak there is at most 1.07x to gain)."""
    lib = lib or fma_probe()
    if lib is None:
        return None
    per_iter = 2 * lib.tl_bench_fma_num_chains() * lib.tl_bench_fma_lanes()
    n = 1000
    while True:  # iterations for about `seconds` per probe
        t = time.thread_time()
        lib.tl_bench_fma_chains(n, 1.0)
        t = time.thread_time() - t
        if t >= seconds / 4 or n > 1 << 40:
            break
        n *= 4
    n = max(1000, int(n * seconds / max(t, 1e-6)))
    best = 0.0
    for _ in range(probes):
        t = time.thread_time()
        lib.tl_bench_fma_chains(n, 1.0)
        t = time.thread_time() - t
        best = max(best, n * per_iter / max(t, 1e-9) / 1e9)
    return best


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return platform.processor() or "unknown"
    model = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
    family = re.search(r"^cpu family\s*:\s*(\d+)$", text, re.M)
    flags = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
    flagset = set(flags.group(1).split()) if flags else set()
    isa = cpu_isa_features(flagset)
    name = model.group(1).strip() if model else "unknown"
    cpu_model_no = re.search(r"^model\s*:\s*(\d+)$", text, re.M)
    if family:
        name += f" (family {family.group(1)}" + (f", model {cpu_model_no.group(1)})" if cpu_model_no else ")")
    return f"{name}; {os.cpu_count()} cores; " + " ".join(isa)


def blas_info():
    try:
        import numpy as np
        p = openblas_peer()
        return (f"numpy {np.__version__}, {p.get('internal_api')} {p.get('version') or ''}, kernels for "
                f"'{p.get('architecture')}' ({p.get('level')}; {p.get('source')})")
    except Exception as e:
        return f"numpy (BLAS unknown: {e})"


def _affinity():
    """The CPUs this process may run on."""
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)


def physical_cores(cpus=None, sysfs="/sys/devices/system/cpu"):
    """The physical cores behind `cpus` (default: the CPUs this process may run on), as a set of
    (package, core) pairs from sysfs topology; None where sysfs does not say (no Linux topology)."""
    if cpus is None:
        cpus = _affinity()
    cores = set()
    for c in cpus:
        try:
            with open(f"{sysfs}/cpu{c}/topology/physical_package_id") as f:
                pkg = f.read().strip()
            with open(f"{sysfs}/cpu{c}/topology/core_id") as f:
                core = f.read().strip()
        except OSError:
            return None
        cores.add((pkg, core))
    return cores


def placement_note(threads, cpus=None, sysfs="/sys/devices/system/cpu"):
    """A warning when `threads` threads cannot each have a physical core of their own here: the
    process may run on fewer CPUs than threads, or its CPUs are hyperthreads of fewer cores (two
    threads on one core's two hyperthreads share its FMA units, so a two-thread ratio then measures
    one core; pin to CPUs of distinct cores). None when they can, or where sysfs does not say."""
    if cpus is None:
        cpus = _affinity()
    cpus = sorted(cpus)
    cores = physical_cores(cpus, sysfs)
    if threads <= 1 or cores is None:
        return None
    if len(cpus) < threads:
        return (f"WARNING: {threads} threads on {len(cpus)} CPU(s) ({','.join(map(str, cpus))}): the threads "
                f"share CPUs, so the rates are not those of {threads} cores")
    if len(cores) < threads:
        return (f"WARNING: {threads} threads on CPUs {','.join(map(str, cpus))}, which are hyperthreads of "
                f"{len(cores)} physical core(s): the threads share a core's units, so the rates are not those of "
                f"{threads} cores (pin to CPUs of distinct cores: /sys/devices/system/cpu/cpu*/topology/core_id)")
    return None


def machine():
    return {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_model(),
        "blas": blas_info(),
        "python": platform.python_version(),
        "compiler": subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "isa": cpu_isa_features(),
        "peer_env_removed": os.environ.get("TL_BENCH_REMOVED_ENV", ""),
        "peer_env_set": [v for v in PEER_SLOWING_ENV if v in os.environ],
    }


def gbps(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


def gflops(flops, ms):
    return flops / (ms * 1e-3) / 1e9


class Table:
    """Rows of one benchmark: printed as one aligned table and saved as bench/results/<name>.json."""

    def __init__(self, name, title, columns):
        self.name, self.title, self.columns, self.rows, self.notes = name, title, columns, [], []

    def add(self, *values):
        assert len(values) == len(self.columns), (values, self.columns)
        self.rows.append(list(values))

    def note(self, text):
        self.notes.append(text)

    @staticmethod
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
        return str(v)

    def markdown(self):
        out = ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        out += ["| " + " | ".join(self.fmt(v) for v in row) + " |" for row in self.rows]
        return "\n".join(out)

    def print(self):
        cells = [self.columns] + [[self.fmt(v) for v in row] for row in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        print(f"\n{self.title}")
        for k, r in enumerate(cells):
            print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
            if k == 0:
                print("  ".join("-" * w for w in widths))
        for n in self.notes:
            print(f"  note: {n}")

    def save(self):
        os.makedirs(RESULTS, exist_ok=True)
        data = {"name": self.name, "title": self.title, "columns": self.columns, "rows": self.rows,
                "notes": self.notes, "machine": machine()}
        path = os.path.join(RESULTS, f"{self.name}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(data, f, indent=1)
        os.replace(path + ".tmp", path)
        return path

    def finish(self):
        self.print()
        print(f"  -> {self.save()}")


def load_results(prefix):
    """Saved tables whose name starts with `prefix`, in name order."""
    out = []
    if not os.path.isdir(RESULTS):
        return out
    for fn in sorted(os.listdir(RESULTS)):
        if fn.startswith(prefix) and fn.endswith(".json"):
            with open(os.path.join(RESULTS, fn)) as f:
                out.append(json.load(f))
    return out


def write_doc_section(section, body):
    """Replaces the text between `<!-- bench:{section}:begin -->` and `<!-- bench:{section}:end -->`
    in docs/PERFORMANCE.md (appending the section when the markers are absent)."""
    begin, end = f"<!-- bench:{section}:begin -->", f"<!-- bench:{section}:end -->"
    text = open(PERF_DOC).read() if os.path.exists(PERF_DOC) else "# Performance\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(PERF_DOC, "w") as f:
        f.write(text)
