#!/usr/bin/env python3
"""Run unmodified TileLang-Ascend example programs on this project's `ascend` target (the simulator).

The programs are NOT part of this repository: they are extracted at run time from a snapshot of the
public TileLang-Ascend repository (a bare git directory, e.g. the one the session's `fetch` tool brings:
/work/.mirror/tile-ai+tilelang-ascend/repo), from its two branches: `ascendc_pto` (the default one: the
Expert and Developer routes) and `npuir`. The list is scripts/ascend_suite.txt. Each program runs in its
own process with this project's `tilelang` first on sys.path and counts as passed when it exits 0 (its
own checks against torch included).

  scripts/ascend_suite.py                       # every program of the list
  scripts/ascend_suite.py -k gemm -j 2          # only programs whose path contains 'gemm', 2 at a time
  scripts/ascend_suite.py --json out.json --timeout 300 --markdown table.md

A small shim runs before each program: a stub `torch_npu` module, `torch.npu` (synchronize,
set_device, current_device, is_available, Event, ...) as host no-ops, and torch's "npu" device
arguments (factories' device=, Tensor.to, Tensor.npu, Module.npu) mapped to the cpu. The kernels
themselves compile for and run on the `ascend` target: the programs' own target names are resolved by
tilelang ("npuir", "ascendc", "pto" and an "auto" kernel with is_npu=True all name the simulator).
Nothing else of a program is changed; where the list gives arguments, they are the program's own
command-line options (smaller sizes), recorded next to it.
"""
import argparse
import json
import os
import shlex
import shutil
import sys

from suite_common import extract_archive, first_error, run_all, run_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MIRROR = "/work/.mirror/tile-ai+tilelang-ascend/repo"
BRANCHES = ("ascendc_pto", "npuir")
ROUTES = ("expert", "developer", "npuir")

NPU_SHIM = r'''
import sys as _sys, time as _time, types as _types
import torch as _torch

def _map(dev):
    if dev is None or isinstance(dev, bool):
        return dev
    if isinstance(dev, int):
        return "cpu"
    s = str(dev)
    return "cpu" if s.startswith("npu") or s.startswith("cuda") else dev

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
              "from_numpy", "logspace", "tril", "triu", "tril_indices", "triu_indices"):
    if hasattr(_torch, _name):
        setattr(_torch, _name, _wrap_factory(getattr(_torch, _name)))

_orig_to = _torch.Tensor.to
def _to(self, *args, **kwargs):
    args = tuple(_map(a) if isinstance(a, (str, _torch.device)) else a for a in args)
    if "device" in kwargs:
        kwargs["device"] = _map(kwargs["device"])
    return _orig_to(self, *args, **kwargs)
_torch.Tensor.to = _to
_torch.Tensor.npu = lambda self, *a, **k: self
_torch.Tensor.cuda = lambda self, *a, **k: self
_torch.nn.Module.npu = lambda self, *a, **k: self
_orig_device = _torch.device

class _DeviceMeta(type):
    # torch.device("npu") / torch.device("npu", 0) -> the cpu device; isinstance checks see torch's type
    def __instancecheck__(cls, obj):
        return isinstance(obj, _orig_device)
    def __call__(cls, *args, **kwargs):
        if args and isinstance(args[0], str) and _map(args[0]) != args[0]:
            args = ("cpu",)
        return _orig_device(*args, **kwargs)

class _Device(metaclass=_DeviceMeta):
    pass
_torch.device = _Device

class _Event:
    def __init__(self, *a, **k):
        self.t = None
    def record(self, *a, **k):
        self.t = _time.perf_counter()
    def synchronize(self):
        pass
    def wait(self, *a, **k):
        pass
    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3

_npu = _types.ModuleType("torch.npu")
_npu.synchronize = lambda *a, **k: None
_npu.set_device = lambda *a, **k: None
_npu.current_device = lambda: 0
_npu.device_count = lambda: 1
_npu.is_available = lambda: True
_npu.empty_cache = lambda *a, **k: None
_npu.manual_seed = lambda *a, **k: None
_npu.manual_seed_all = lambda *a, **k: None
_npu.Event = _Event
_torch.npu = _npu
_sys.modules["torch.npu"] = _npu
_stub = _types.ModuleType("torch_npu")
_stub.npu = _npu
_stub.__file__ = __file__ if "__file__" in globals() else "torch_npu_shim"
_sys.modules["torch_npu"] = _stub
'''

RUNNER = r'''
import os, runpy, sys
exec(compile(open(os.environ["ASCEND_SUITE_SHIM"]).read(), "ascend_suite_shim", "exec"))
path = sys.argv[1]
sys.argv = [path] + sys.argv[2:]
# As `python path` would: the program's directory first on sys.path (examples import siblings).
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
runpy.run_path(path, run_name="__main__")
'''


def read_list(path):
    """(branch, path, route, args) for each line `<branch> <path> <route> [program options...]`."""
    items = []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = shlex.split(line)
        if len(parts) < 3 or parts[0] not in BRANCHES or parts[2] not in ROUTES:
            raise SystemExit(f"{path}:{n}: expected '<branch> <path> <route> [options]' with branch in "
                             f"{BRANCHES} and route in {ROUTES}, got: {line}")
        items.append((parts[0], parts[1], parts[2], parts[3:]))
    return items


def extract(git_dir, branch, dest):
    return extract_archive(git_dir, branch, ["examples"], os.path.join(dest, branch))


def markdown(results):
    out = ["| route | passed | failed | timed out |", "|---|---|---|---|"]
    for route in ROUTES:
        rs = [r for r in results if r["route"] == route]
        if rs:
            out.append(f"| {route} | **{sum(r['status'] == 'pass' for r in rs)} / {len(rs)}** | "
                       f"{sum(r['status'] == 'fail' for r in rs)} | {sum(r['status'] == 'timeout' for r in rs)} |")
    out += ["", "| program | route | result | first error |", "|---|---|---|---|"]
    for r in results:
        opts = (" `" + " ".join(r["args"]) + "`") if r["args"] else ""
        err = r["error"].replace("|", "\\|")
        out.append(f"| {r['branch']}:{r['path']}{opts} | {r['route']} | {r['status']} ({r['secs']} s) | {err} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", default=os.path.join(ROOT, "scripts", "ascend_suite.txt"))
    ap.add_argument("--mirror", default=DEFAULT_MIRROR, help="bare git directory of TileLang-Ascend")
    ap.add_argument("--work", default="/tmp/ascend_suite", help="where the programs are extracted")
    ap.add_argument("-k", default=None, help="only programs whose path contains this string")
    ap.add_argument("--route", choices=ROUTES, default=None)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per program")
    ap.add_argument("--json", default=None)
    ap.add_argument("--markdown", default=None, help="write the result table (markdown) here")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--fresh", action="store_true", help="re-extract the programs")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="programs run in parallel")
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)  # the programs run in their own directories

    if args.fresh and os.path.isdir(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work, exist_ok=True)
    shim = os.path.join(args.work, "npu_shim.py")
    with open(shim, "w") as f:
        f.write(NPU_SHIM)
    runner = os.path.join(args.work, "runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)

    items = read_list(args.list)
    if args.k:
        items = [it for it in items if args.k in it[1]]
    if args.route:
        items = [it for it in items if it[2] == args.route]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("TILELANG_SOURCE_DIR", ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    env["ASCEND_SUITE_SHIM"] = shim
    env["CUDA_VISIBLE_DEVICES"] = ""

    for branch in sorted({it[0] for it in items}):
        if not os.path.isdir(os.path.join(args.work, branch)):
            if not os.path.isdir(args.mirror):
                raise SystemExit(f"no TileLang-Ascend snapshot at {args.mirror} (pass --mirror or a filled --work)")
            extract(args.mirror, branch, args.work)

    def run_one(item):
        branch, path, route, prog_args = item
        full = os.path.join(args.work, branch, path)
        res = dict(branch=branch, path=path, route=route, args=prog_args)
        if not os.path.exists(full):
            return dict(res, status="missing", secs=0, error="not in snapshot")
        log = os.path.join(args.work, "logs", (branch + "_" + path).replace("/", "_") + ".log")
        rc, secs, out = run_program([args.python, runner, full, *prog_args], os.path.dirname(full), env,
                                    args.timeout, log)
        if rc is None:
            status, err = "timeout", f"timed out after {args.timeout}s"
        else:
            status = "pass" if rc == 0 else "fail"
            err = "" if rc == 0 else first_error(out)
        print(f"{status:8s} {secs:7.1f}s  {route:9s} {branch}:{path}  {err}", flush=True)
        return dict(res, status=status, secs=secs, error=err)

    results = run_all(run_one, items, args.jobs)
    print()
    for route in ROUTES:
        rs = [r for r in results if r["route"] == route]
        if rs:
            print(f"{route:9s} {sum(r['status'] == 'pass' for r in rs)}/{len(rs)} passed")
    n_pass = sum(r["status"] == "pass" for r in results)
    print(f"total     {n_pass}/{len(results)} passed on ascend  (logs: {args.work}/logs)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(passed=n_pass, total=len(results), results=results), f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results))


if __name__ == "__main__":
    main()
