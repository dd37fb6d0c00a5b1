#!/usr/bin/env python3
"""Run unmodified upstream TileLang programs (examples, tests, puzzles) against this project.

The programs are NOT part of this repository: they are extracted at run time from snapshots of the
public repositories (bare git directories, e.g. the ones the session's `fetch` tool brings:
/work/.mirror/tile-ai+tilelang/repo and /work/.mirror/tile-ai+tilelang-puzzles/repo). The list is
scripts/upstream_suite.txt. Each program runs in its own process with this project's `tilelang`
first on sys.path, and counts as passed when it exits 0 (kind `main`) or when pytest reports at
least one passed test and none failed (kind `pytest`; pytest's rootdir is the extracted repository,
so the repository's own conftest.py files apply). Options after the kind in the list are passed to
the program (its command line, or pytest's).

  scripts/upstream_suite.py --device cpu                 # every program, torch tensors on the cpu
  scripts/upstream_suite.py --device cuda -k flash       # only programs whose path contains 'flash'
  scripts/upstream_suite.py --json out.json --timeout 300

`--device cpu` runs the programs with their tensors on the cpu: a small shim maps torch's "cuda"
device arguments to "cpu" (factories, .to, .cuda), makes torch.cuda.synchronize/Event work
without a GPU and torch.cuda.is_available() say True, compiles kernels that name target "cuda"
for the cpu target, and TILELANG_TESTING_CUDA_ON_CPU=1 lets tilelang.testing.requires_cuda tests run on
the cpu target; nothing else of the programs is changed. Triton kernels that programs run as their
reference (fla's) run in Triton's interpreter (TRITON_INTERPRET=1; see the shim for the three
GPU-only parts of Triton it replaces).
"""
import argparse
import json
import os
import re
import shutil
import sys

from suite_common import extract_archive, first_error, run_all, run_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MIRRORS = {
    "tilelang": "/work/.mirror/tile-ai+tilelang/repo",
    "puzzles": "/work/.mirror/tile-ai+tilelang-puzzles/repo",
}
# Only these parts of each repository are extracted (never upstream's own `tilelang` package).
EXTRACT = {"tilelang": ["examples", "testing"], "puzzles": ["ans", "puzzles", "common"]}

CPU_SHIM = r'''
import os as _os
import time as _time
try:
    import torch as _torch
except ImportError:
    _torch = None
if _torch is not None:
    def _map(dev):
        if dev is None:
            return dev
        if isinstance(dev, int):
            return "cpu"
        s = str(dev)
        return "cpu" if s.startswith("cuda") else dev

    def _wrap_factory(fn):
        def wrapped(*args, **kwargs):
            if "device" in kwargs:
                kwargs["device"] = _map(kwargs["device"])
            return fn(*args, **kwargs)
        wrapped.__name__ = getattr(fn, "__name__", "factory")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        return wrapped

    for _name in ("randn", "rand", "randint", "randperm", "zeros", "ones", "empty", "full", "arange",
                  "tensor", "as_tensor", "linspace", "eye", "zeros_like", "ones_like", "empty_like",
                  "randn_like", "rand_like", "full_like", "randint_like", "empty_strided", "normal",
                  "from_numpy", "logspace", "tril_indices", "triu_indices"):
        if hasattr(_torch, _name):
            setattr(_torch, _name, _wrap_factory(getattr(_torch, _name)))

    _orig_to = _torch.Tensor.to
    def _to(self, *args, **kwargs):
        args = tuple(_map(a) if isinstance(a, (str, _torch.device, int)) and not isinstance(a, bool)
                     and (isinstance(a, (str, _torch.device)) or len(args) == 1) else a for a in args)
        if "device" in kwargs:
            kwargs["device"] = _map(kwargs["device"])
        return _orig_to(self, *args, **kwargs)
    _torch.Tensor.to = _to
    _torch.Tensor.cuda = lambda self, *a, **k: self
    _torch.nn.Module.cuda = lambda self, *a, **k: self

    class _Event:
        def __init__(self, *a, **k):
            self.t = None
        def record(self, *a, **k):
            self.t = _time.perf_counter()
        def synchronize(self):
            pass
        def elapsed_time(self, other):
            return (other.t - self.t) * 1e3
    _torch.cuda.Event = _Event
    _torch.cuda.synchronize = lambda *a, **k: None
    _torch.cuda.empty_cache = lambda *a, **k: None
    _torch.cuda.current_device = lambda: 0
    _torch.cuda.set_device = lambda *a, **k: None
    _torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
    _torch.cuda.get_device_name = lambda *a, **k: "cpu (upstream_suite shim)"
    class _DeviceScope:
        """torch.cuda.device(i) / device_of(t): selects a device; there is one, the host."""
        def __init__(self, *a, **k):
            self.idx = 0
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return False
    _torch.cuda.device = _DeviceScope
    _torch.cuda.device_of = _DeviceScope
    # the CUDA profiler's capture range (cudaProfilerStart/Stop): nothing to capture on the host
    import torch.cuda.profiler as _torch_cuda_profiler
    _torch_cuda_profiler.start = lambda: None
    _torch_cuda_profiler.stop = lambda: None
    # Programs that ask torch whether CUDA is there before they run (heuristic configs read the
    # capability above) are told yes: their tensors land on the cpu through the mappings above.
    _torch.cuda.is_available = lambda: True
    _torch.cuda.device_count = lambda: 1

# A kernel compiled for target "cuda" (tilelang.compile(..., target="cuda"), JITKernel(...,
# target="cuda"), @tilelang.jit(target="cuda")) is compiled for the cpu target instead: the same
# program, run on the host as its tensors are.
import importlib as _importlib
_tl_kernel = _importlib.import_module("tilelang.jit.kernel")  # (the attribute tilelang.jit is the decorator)
_tl_normalize_target = _tl_kernel._normalize_target
def _cpu_target(target):
    t = _tl_normalize_target(target)
    return "cpu" if isinstance(t, str) and t.split()[:1] == ["cuda"] else t
_tl_kernel._normalize_target = _cpu_target

# Triton kernels that programs run as their reference (the `fla` package, sglang-style casts) run
# in Triton's own interpreter: upstream_suite.py sets TRITON_INTERPRET=1 for the cpu run, so
# @triton.jit kernels execute on the host tensors (block operations in numpy). Two things of
# Triton still ask for a GPU and are replaced here: (1) the active driver, which programs and
# libraries query for the device (fla chooses its device from it): a host driver whose target
# says "cpu"; (2) @triton.autotune, which would time every config on a GPU: the interpreter
# ignores num_warps / num_stages and its cost grows with the number of program instances, so
# the config launching the fewest instances runs (the first such in the list; configs compute
# the same values, they differ in speed only). The host driver names the device the rest of the
# shim describes (a CUDA device of capability 9.0, as torch.cuda answers above): libraries pick
# their GPU code paths, which the interpreter runs (fla's own "cpu" fallback calls torch.cpu.device,
# which torch does not have); it offers no device properties (`utils`), so libraries that ask for
# them take their fallbacks.
import importlib.util as _ilu
def _triton_interpreter_setup():
    import triton.runtime.autotuner as _tr_autotuner
    from triton.runtime import driver as _tr_driver  # the DriverConfig object
    from triton.backends.compiler import GPUTarget as _GPUTarget

    class _HostDriver:
        """Triton's active driver when kernels run in the interpreter on host tensors."""
        def get_current_target(self):
            return _GPUTarget("cuda", 90, 32)
        def get_current_device(self):
            return 0
        def set_current_device(self, device):
            pass
        def get_current_stream(self, device=None):
            return 0
        def get_active_torch_device(self):
            return _torch.device("cpu")  # where the tensors are
    _tr_driver.set_active(_HostDriver())

    def _programs(grid, meta):
        g = grid(meta) if callable(grid) else grid
        g = tuple(g) if isinstance(g, (tuple, list)) else (g,)
        n = 1
        for x in g:
            n *= int(x)
        return n

    _orig_autotune_run = _tr_autotuner.Autotuner.run
    def _autotune_run_interpreted(self, *args, **kwargs):
        if len(self.configs) <= 1:
            return _orig_autotune_run(self, *args, **kwargs)
        self.nargs = dict(zip(self.arg_names, args))
        configs = self.prune_configs(kwargs)
        grid = kwargs.get("grid")
        chosen = configs[0]
        if grid is not None:
            try:
                base = {**self.nargs, **kwargs}
                chosen = min(configs, key=lambda c: _programs(grid, {**base, **c.all_kwargs()}))
            except Exception:
                chosen = configs[0]
        saved = self.configs
        self.configs = [chosen]
        try:
            return _orig_autotune_run(self, *args, **kwargs)
        finally:
            self.configs = saved
    _tr_autotuner.Autotuner.run = _autotune_run_interpreted

    # Triton <= 3.6's interpreter turns a scalar into an int with int(1-element array), which
    # NumPy >= 2.4 refuses ("only 0-dimensional arrays can be converted"); later Triton squeezes
    # the array first (`for i in range(0, tl.cdiv(T, BT))` over a run-time T needs it). The same here.
    import triton.runtime.interpreter as _tr_interp
    if hasattr(_tr_interp, "_patch_lang_tensor"):
        _orig_patch_lang_tensor = _tr_interp._patch_lang_tensor
        def _patch_lang_tensor(tensor, scope):
            _orig_patch_lang_tensor(tensor, scope)
            scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))
        _tr_interp._patch_lang_tensor = _patch_lang_tensor

if _os.environ.get("TRITON_INTERPRET") == "1" and _ilu.find_spec("triton") is not None:
    try:
        _triton_interpreter_setup()
    except Exception as _e:  # an unusual Triton: the programs that need it fail on their own
        import sys as _sys
        _sys.stderr.write(f"upstream_suite shim: Triton interpreter set-up skipped: {_e!r}\n")
'''

RUNNER = r'''
import os, runpy, sys
if os.environ.get("UPSTREAM_SUITE_SHIM"):
    exec(compile(open(os.environ["UPSTREAM_SUITE_SHIM"]).read(), "upstream_suite_shim", "exec"))
kind, base, path, options = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
sys.argv = [path] + options
if kind == "pytest":
    import pytest
    # The repository's own conftest.py files (testing/conftest.py: seeds, the `perf` marker) apply
    # wherever the programs were extracted: pytest's rootdir is the extracted repository.
    sys.exit(pytest.main(["-q", "-x", "-p", "no:cacheprovider", "--rootdir", base, "--confcutdir", base,
                          *options, path]))
# As `python path` would: the program's directory first on sys.path (examples import their
# sibling modules, e.g. varlen_utils).
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
runpy.run_path(path, run_name="__main__")
'''


def read_list(path):
    """(repo, path, kind, options, directives) per program line. Words after the kind that start
    with '@' are directives to this runner, not options of the program: `@solo` runs the program
    alone, after the others (see run_solo_last)."""
    items = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        rest = parts[3:]
        options = tuple(w for w in rest if not w.startswith("@"))
        directives = frozenset(w[1:] for w in rest if w.startswith("@"))
        unknown = directives - {"solo"}
        if unknown:
            raise ValueError(f"{path}: unknown directive(s) {sorted(unknown)} in line: {line}")
        items.append((parts[0], parts[1], parts[2] if len(parts) > 2 else "main", options, directives))
    return items


def run_solo_last(fn, items, jobs):
    """fn(item) for every item, results in the items' order: the programs without `@solo` `jobs` at a
    time, then each `@solo` program on its own with the machine to itself. `@solo` marks programs that
    are benchmarks with fixed loops sized for a GPU (they time torch's kernels and ours many times);
    run beside `jobs` - 1 others, their run time measures the other programs' load, not them."""
    shared = [it for it in items if "solo" not in it[4]]
    solo = [it for it in items if "solo" in it[4]]
    done = dict(zip(map(id, shared), run_all(fn, shared, jobs)))
    done.update(zip(map(id, solo), run_all(fn, solo, 1)))
    return [done[id(it)] for it in items]


def extract(repo, git_dir, dest):
    return extract_archive(git_dir, "HEAD", EXTRACT[repo], os.path.join(dest, repo))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--list", default=os.path.join(ROOT, "scripts", "upstream_suite.txt"))
    ap.add_argument("--mirror", action="append", default=[], help="repo=git_dir (default: the fetch mirrors)")
    ap.add_argument("--work", default="/tmp/upstream_suite", help="where the programs are extracted")
    ap.add_argument("-k", default=None, help="only programs whose path contains this string")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--json", default=None)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--fresh", action="store_true", help="re-extract the programs")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="programs run in parallel")
    ap.add_argument("--tilelang", default=None,
                    help="run under another tilelang installed in this folder instead of this project "
                         "(TileLang's own wheel: its count on the same machine and list; cuda only)")
    args = ap.parse_args()
    if args.tilelang and args.device != "cuda":
        ap.error("--tilelang: TileLang itself has no cpu target; use --device cuda")
    args.work = os.path.abspath(args.work)  # the programs run in their own directories

    mirrors = dict(DEFAULT_MIRRORS)
    for m in args.mirror:
        k, v = m.split("=", 1)
        mirrors[k] = v
    if args.fresh and os.path.isdir(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work, exist_ok=True)
    shim = os.path.join(args.work, "cpu_shim.py")
    with open(shim, "w") as f:
        f.write(CPU_SHIM)
    runner = os.path.join(args.work, "runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)

    items = read_list(args.list)
    if args.k:
        items = [it for it in items if args.k in it[1]]
    env = dict(os.environ)
    first = os.path.abspath(args.tilelang) if args.tilelang else os.path.join(ROOT, "python")
    env["PYTHONPATH"] = first + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if args.tilelang:
        env.pop("TILELANG_SOURCE_DIR", None)
    else:
        env.setdefault("TILELANG_SOURCE_DIR", ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    if args.device == "cpu":
        env["UPSTREAM_SUITE_SHIM"] = shim
        env["CUDA_VISIBLE_DEVICES"] = ""
        # tilelang.testing.requires_cuda runs TileLang's CUDA tests on the cpu target (see its doc)
        env["TILELANG_TESTING_CUDA_ON_CPU"] = "1"
        # Triton kernels that programs run as their reference run in Triton's interpreter on the
        # host tensors (see the shim)
        env["TRITON_INTERPRET"] = "1"
    def run_one(item):
        repo, path, kind, options, _directives = item
        base = os.path.join(args.work, repo)
        if not os.path.isdir(base):  # not extracted yet (a pre-extracted --work needs no mirror)
            if repo not in mirrors or not os.path.isdir(mirrors[repo]):
                return dict(repo=repo, path=path, kind=kind, status="missing", secs=0, error="no mirror")
            base = extract(repo, mirrors[repo], args.work)
        full = os.path.join(base, path)
        if not os.path.exists(full):
            return dict(repo=repo, path=path, kind=kind, status="missing", secs=0, error="not in snapshot")
        cwd = os.path.dirname(full)
        run_env = dict(env)
        # puzzles import `common.utils` from their repository root
        run_env["PYTHONPATH"] = run_env["PYTHONPATH"] + os.pathsep + base
        log = os.path.join(args.work, "logs", (repo + "_" + path).replace("/", "_") + ".log")
        rc, secs, out = run_program([args.python, runner, kind, base, full, *options], cwd, run_env, args.timeout, log)
        if rc is None:
            status, err = "timeout", f"timed out after {args.timeout}s"
        else:
            ok = rc == 0
            if kind == "pytest":
                m = re.search(r"(\d+) passed", out)
                ok = ok and m is not None and int(m.group(1)) > 0
            status = "pass" if ok else "fail"
            err = "" if ok else first_error(out)
        print(f"{status:8s} {secs:7.1f}s  {repo}:{path}  {err}", flush=True)
        return dict(repo=repo, path=path, kind=kind, status=status, secs=secs, error=err)

    # Extract each repository once before running programs in parallel.
    for repo in sorted({it[0] for it in items}):
        if not os.path.isdir(os.path.join(args.work, repo)) and repo in mirrors and os.path.isdir(mirrors[repo]):
            extract(repo, mirrors[repo], args.work)
    results = run_solo_last(run_one, items, args.jobs)
    n_pass = sum(r["status"] == "pass" for r in results)
    print(f"\n{n_pass}/{len(results)} passed on {args.device}  (logs: {args.work}/logs)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=args.device, passed=n_pass, total=len(results), results=results), f, indent=1)


if __name__ == "__main__":
    main()
