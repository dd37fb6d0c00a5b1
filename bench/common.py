"""Shared helpers for the benchmarks in bench/: timing, the machine, one printed table, JSON results.

Every benchmark measures a ratio against a peer timed in the same process, by the same method
(tilelang.profiler.do_bench: wall clock, warm-up excluded, median), with the two interleaved over
several rounds so that load from other processes hits both alike; correctness is checked on the same
inputs first. Results go to bench/results/<name>.json; docs/PERFORMANCE.md keeps the latest tables.
"""
import datetime
import json
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


def do_bench(fn, warmup=25, rep=100):
    """Median wall-clock milliseconds of fn() (tilelang.profiler.do_bench)."""
    from tilelang.profiler import do_bench as tl_do_bench
    return tl_do_bench(fn, warmup=warmup, rep=rep, return_mode="median")


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


def interleaved(fns, rounds=5, warmup=25, rep=100):
    """Timings of several callables measured in alternation, `rounds` times each (each round after
    a short wait for the machine to be idle): a burst of load from other processes on this shared
    machine then hits every contender, not just one."""
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        wait_for_idle()
        for name, fn in fns.items():
            samples[name].append(do_bench(fn, warmup=warmup, rep=rep))
    return Timings(samples)


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
    isa = [f for f in ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_vnni",
                       "avx512_fp16", "amx_tile", "amx_bf16") if f in flagset]
    name = model.group(1).strip() if model else "unknown"
    if family:
        name += f" (family {family.group(1)})"
    return f"{name}; {os.cpu_count()} cores; " + " ".join(isa)


def blas_info():
    try:
        import numpy as np
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        core = ""
        try:
            import ctypes
            import glob
            for lib in glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "*openblas*")):
                fn = ctypes.CDLL(lib).scipy_openblas_get_corename64_
                fn.restype = ctypes.c_char_p
                core = f", kernels for '{fn().decode()}'"
        except Exception:
            pass
        return f"numpy {np.__version__}, {blas.get('name')} {blas.get('version')}{core}"
    except Exception as e:  # show_config(mode=...) needs numpy >= 1.25
        return f"numpy (BLAS unknown: {e})"


def machine():
    return {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_model(),
        "blas": blas_info(),
        "python": platform.python_version(),
        "compiler": subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
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
