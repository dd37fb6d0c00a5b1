"""Accuracy of every scalar math function of the language, per target, precise and fast math.

Each function runs as a T.Parallel kernel over float32 inputs drawn from its domain (plus edge
points) and is compared with numpy in float64: max error in units in the last place of the float32
result (ulp), max relative error, max absolute error, and how many results are not finite where
the reference is. "precise" is the default; "fast" compiles with TL_ENABLE_FAST_MATH (cpu:
-ffast-math; cuda: --use_fast_math). The T.__exp-style intrinsics are the explicit fast forms; the
T.ieee_* forms must be correctly rounded (0.5 ulp) in both modes.

  python bench/math_accuracy.py --target cpu [--points 1048576]        # print the table
  python bench/math_accuracy.py --target cpu --update                  # rewrite the published
      results (bench/results/math_accuracy.json) and docs/MATH_ACCURACY.md for that target
  python bench/math_accuracy.py --target cuda --out f.json             # on a GPU (gpu_check.sh)
  python bench/math_accuracy.py --merge f.json                         # publish a GPU run

Published bounds (`bound` in the JSON, checked by tests/python/cpu/test_math_accuracy.py and, on a
GPU, tests/python/cuda/test_math_accuracy_gpu.py) are the measured maxima rounded up to the next
step of BOUND_STEPS; for cuda, until a GPU run is published, the bounds are those NVIDIA documents
for the CUDA math library (CUDA C++ Programming Guide, "Mathematical Functions").
"""
import argparse
import datetime
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results", "math_accuracy.json")
DOC = os.path.join(ROOT, "docs", "MATH_ACCURACY.md")
BOUND_STEPS = [0.5, 1, 1.5, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]
PI = float(np.float32(math.pi))


def _uniform(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _log_uniform(lo_exp, hi_exp, sign=False):
    def draw(rng, n):
        v = np.exp2(rng.uniform(lo_exp, hi_exp, n))
        if sign:
            v *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
        return v
    return draw


def _sigmoid64(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


# name -> (arity, expression template over {0} {1} {2}, float64 reference, input samplers, edge
# points, metric). Metric "ulp": bounds in ulp; "abs": in absolute error (sin and cos, whose ulp
# error near their zeros is unbounded for any float32 implementation); "exact": correctly rounded.
def functions():
    pos = _log_uniform(-126, 127.9)
    signed = _log_uniform(-60, 60, True)
    return {
        "exp": (1, "T.exp({0})", np.exp, [_uniform(-87.3, 88.7)], [0.0, -0.0, 1.0, -87.3, 88.7], "ulp"),
        "exp2": (1, "T.exp2({0})", np.exp2, [_uniform(-126.0, 127.9)], [0.0, 1.0, -126.0, 127.9, 0.5], "ulp"),
        "log": (1, "T.log({0})", np.log, [pos], [1.0, 2.0, 0.5, 1e-30, 3e38], "ulp"),
        "log2": (1, "T.log2({0})", np.log2, [pos], [1.0, 2.0, 0.75, 1e-30, 3e38], "ulp"),
        "sqrt": (1, "T.sqrt({0})", np.sqrt, [pos], [1.0, 2.0, 1e-30, 3e38], "ulp"),
        "rsqrt": (1, "T.rsqrt({0})", lambda x: 1.0 / np.sqrt(x), [_log_uniform(-125, 125)], [1.0, 4.0, 2.0], "ulp"),
        "tanh": (1, "T.tanh({0})", np.tanh, [_uniform(-10.0, 10.0)], [0.0, 1e-5, -1e-5, 0.5, 9.0], "ulp"),
        "sigmoid": (1, "T.sigmoid({0})", _sigmoid64, [_uniform(-100.0, 100.0)],
                    [0.0, -100.0, 100.0, 20.0, -20.0, 200.0, -200.0], "ulp"),
        "sin": (1, "T.sin({0})", np.sin, [_uniform(-100.0, 100.0)], [0.0, 1.0, -1.0, 50.0], "abs"),
        "cos": (1, "T.cos({0})", np.cos, [_uniform(-100.0, 100.0)], [0.0, 1.0, -1.0, 50.0], "abs"),
        "pow": (2, "T.pow({0}, {1})", np.power, [_log_uniform(-10, 10), _uniform(-8.0, 8.0)],
                [(2.0, 3.0), (10.0, -2.0), (0.5, 7.5)], "ulp"),
        "__exp": (1, "T.__exp({0})", np.exp, [_uniform(-87.3, 88.7)], [0.0, 1.0, -87.3, 88.7], "ulp"),
        "__log": (1, "T.__log({0})", np.log, [pos], [1.0, 2.0, 0.5, 3e38], "ulp"),
        "__sin": (1, "T.__sin({0})", np.sin, [_uniform(-PI, PI)], [0.0, 1.0, -1.0, PI], "abs"),
        "__cos": (1, "T.__cos({0})", np.cos, [_uniform(-PI, PI)], [0.0, 1.0, -1.0, PI], "abs"),
        "ieee_add": (2, "T.ieee_add({0}, {1})", None, [signed] * 2, [(1.0, 2.0 ** -24), (1.0, 3 * 2.0 ** -25)],
                     "exact"),
        "ieee_mul": (2, "T.ieee_mul({0}, {1})", None, [signed] * 2, [(1.0 + 2.0 ** -23, 1.0 + 2.0 ** -23)], "exact"),
        "ieee_fdiv": (2, "T.ieee_fdiv({0}, {1})", None, [signed] * 2, [(1.0, 3.0), (2.0, 7.0)], "exact"),
        "ieee_fmaf": (3, "T.ieee_fmaf({0}, {1}, {2})", None, [_log_uniform(-30, 30, True)] * 3,
                      [(1.0 + 2.0 ** -23, 1.0 - 2.0 ** -23, -1.0)], "exact"),
        "ieee_fsqrt": (1, "T.ieee_fsqrt({0})", None, [pos], [2.0, 3.0], "exact"),
    }


def _round_fma(a, b, c):
    """float32(a * b + c) correctly rounded. a * b is exact in float64; s = fl64(a*b + c) plus the
    TwoSum remainder e is the exact sum. float32 midpoints are float64 numbers, so fl64 never
    crosses one: only when s lands exactly on a midpoint does e (its sign) decide the side."""
    p = a * b
    s = p + c
    bp = s - c
    e = (p - bp) + (c - (s - bp))
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    up = np.nextafter(r, np.float32(np.inf)).astype(np.float64)
    down = np.nextafter(r, np.float32(-np.inf)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        at_mid_above = (s > r64) & (s - r64 == up - s)
        at_mid_below = (s < r64) & (r64 - s == s - down)
    r = np.where(at_mid_above & (e > 0), up.astype(np.float32), r)
    r = np.where(at_mid_below & (e < 0), down.astype(np.float32), r)
    return r


def exact_reference(name, args):
    a = [x.astype(np.float64) for x in args]
    if name == "ieee_add":
        return (a[0] + a[1]).astype(np.float32)  # double rounding is innocuous: 53 >= 2 * 24 + 2
    if name == "ieee_mul":
        return (a[0] * a[1]).astype(np.float32)
    if name == "ieee_fdiv":
        return (a[0] / a[1]).astype(np.float32)
    if name == "ieee_fsqrt":
        return np.sqrt(a[0]).astype(np.float32)
    return _round_fma(a[0], a[1], a[2])


def inputs(name, spec, points, seed=11):
    arity, _, _, samplers, edges, _ = spec
    arrays = []
    for k in range(arity):
        rng = np.random.default_rng(seed * 1000 + k * 17 + sum(map(ord, name)))
        v = samplers[k](rng, points).astype(np.float32)
        e = np.array([(p if arity == 1 else p[k]) for p in edges], np.float32)
        v[:len(e)] = e
        arrays.append(v)
    return arrays


def ulp32(r):
    """The spacing of float32 numbers at |r| (float64 array)."""
    _, e = np.frexp(np.abs(r))
    return np.ldexp(1.0, np.maximum(e - 1, -126) - 23)


def batched_kernel(names, n, workdir, block=1024):
    """One kernel computing every function in `names`: row f of O is function f applied to row f
    of X (and Y, Z). Written to a file and imported (the frontend parses source)."""
    import importlib.util
    specs = functions()
    nf = len(names)
    lines = ["import tilelang.language as T", "", "",
             "def build():", "    @T.prim_func",
             f"    def main(X: T.Tensor(({nf}, {n}), 'float32'), Y: T.Tensor(({nf}, {n}), 'float32'),",
             f"             Z: T.Tensor(({nf}, {n}), 'float32'), O: T.Tensor(({nf}, {n}), 'float32')):",
             f"        with T.Kernel(T.ceildiv({n}, {block}), threads=256) as bx:"]
    for f, name in enumerate(names):
        args = [f"{arr}[{f}, bx * {block} + i]" for arr in ("X", "Y", "Z")]
        lines.append(f"            for i in T.Parallel({block}):")
        lines.append(f"                O[{f}, bx * {block} + i] = " + specs[name][1].format(*args))
    lines.append("    return main")
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, f"math_accuracy_{abs(hash(tuple(names))) % 10 ** 8}_{n}.py")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build()


def run_batched(target, fast, names, points, workdir):
    """{name: (inputs, output)} for every function, from one compiled kernel."""
    import tilelang
    specs = functions()
    ins = {name: inputs(name, specs[name], points) for name in names}
    X, Y, Z = (np.ones((len(names), points), np.float32) for _ in range(3))
    for f, name in enumerate(names):
        for k, arr in enumerate((X, Y, Z)[:len(ins[name])]):
            arr[f] = ins[name][k]
    configs = {"tl.enable_fast_math": True} if fast else None
    kern = tilelang.compile(batched_kernel(names, points, workdir), target=target, pass_configs=configs)
    if target == "cuda":
        import torch
        dev = [torch.from_numpy(a).cuda() for a in (X, Y, Z)] + [torch.zeros(X.shape, dtype=torch.float32,
                                                                             device="cuda")]
        kern(*dev)
        torch.cuda.synchronize()
        O = dev[-1].cpu().numpy()
    else:
        O = np.zeros(X.shape, np.float32)
        kern(X, Y, Z, O)
    return {name: (ins[name], O[f]) for f, name in enumerate(names)}


def errors(name, spec, args, got32):
    """The error figures of one function's results."""
    _, _, ref, _, _, metric = spec
    got = got32.astype(np.float64)
    if metric == "exact":
        want = exact_reference(name, args).astype(np.float64)
        wrong = int(np.sum(~((got == want) | (np.isnan(got) & np.isnan(want)))))
    else:
        with np.errstate(all="ignore"):
            want = ref(*[a.astype(np.float64) for a in args])
        wrong = 0
    ok = np.isfinite(want) & (np.abs(want) <= np.finfo(np.float32).max)
    with np.errstate(all="ignore"):
        nonfinite = int(np.sum(ok & ~np.isfinite(got)))
        e = np.where(ok & np.isfinite(got), np.abs(got - want), 0.0)
        ulp = e / ulp32(want)
        # Relative error over normal results (below 2^-126 the spacing is absolute: see max_ulp).
        rel = np.where(np.abs(want) >= 2.0 ** -126, e / np.abs(want), 0.0)
    worst = int(np.argmax(ulp if metric != "abs" else e))
    return {
        "max_ulp": float(np.max(ulp)), "max_rel": float(np.max(rel)), "max_abs": float(np.max(e)),
        "nonfinite": nonfinite, "not_correctly_rounded": wrong, "metric": metric, "points": int(got.size),
        "worst_input": [float(a[worst]) for a in args],
    }


def bound_of(value):
    for s in BOUND_STEPS:
        if value <= s * (1 + 1e-9):
            return s
    return float(2 ** math.ceil(math.log2(value)))


def abs_bound_of(value):
    if value == 0:
        return 0.0
    return float(2.0 ** math.ceil(math.log2(value)))


def measure(target, modes=("precise", "fast"), points=1 << 20, only=None, workdir=None, quiet=False):
    """{mode: {name: figures}} for `target`; `only` limits the functions."""
    import tempfile
    specs = functions()
    names = [n for n in specs if not only or n in only]
    workdir = workdir or tempfile.mkdtemp(prefix="tl-math-accuracy-")
    out = {}
    for mode in modes:
        results = run_batched(target, mode == "fast", names, points, workdir)
        rows = {}
        for name in names:
            args, got = results[name]
            m = errors(name, specs[name], args, got)
            if m["metric"] == "abs":
                m["bound"] = {"max_abs": abs_bound_of(m["max_abs"])}
            elif m["metric"] == "exact":
                m["bound"] = {"max_ulp": 0.5, "not_correctly_rounded": 0}
            else:
                m["bound"] = {"max_ulp": bound_of(m["max_ulp"])}
            rows[name] = m
            if not quiet:
                print(f"{target:<5} {mode:<8} {name:<11} max {m['max_ulp']:10.3f} ulp  rel {m['max_rel']:9.2e}  "
                      f"abs {m['max_abs']:9.2e}  nonfinite {m['nonfinite']}  wrong {m['not_correctly_rounded']}",
                      flush=True)
        out[mode] = rows
    return out


# NVIDIA's documented maxima (CUDA C++ Programming Guide, Mathematical Functions: single precision,
# and the intrinsics used with --use_fast_math), the cuda bounds until a GPU run is published.
# sigmoid is ours (expf, an add and a correctly rounded division: at most 2 + 1.5 ulp, rounded up);
# sin and cos are bounded in absolute error (2 ulp of a result of magnitude <= 1: 2^-23).
CUDA_DOCUMENTED = {
    "precise": {"exp": 2, "exp2": 2, "log": 1, "log2": 1, "sqrt": 0.5, "rsqrt": 2, "tanh": 2, "sigmoid": 4,
                "pow": 4, "sin": ("abs", 2.0 ** -22), "cos": ("abs", 2.0 ** -22)},
}


def render(data):
    """docs/MATH_ACCURACY.md from the published JSON."""
    lines = ["# Accuracy of the math functions", "",
             "Generated by `bench/math_accuracy.py` (do not edit by hand). Each function runs as a cuda/cpu kernel",
             "over float32 inputs from its domain (plus edge points) and is compared with numpy in float64. Columns:",
             "max error in ulp of the float32 result, max relative error, max absolute error; `bound` is what the",
             "tests hold the implementation to (`tests/python/cpu/test_math_accuracy.py`; on a GPU",
             "`tests/python/cuda/test_math_accuracy_gpu.py`). *precise* is the default; *fast* compiles with",
             "`TL_ENABLE_FAST_MATH` (cpu: `-ffast-math`; cuda: `--use_fast_math`), which assumes finite inputs and",
             "results. `T.__exp`, `T.__log`, `T.__sin`, `T.__cos` are the explicit fast forms (on cuda the",
             "hardware approximations; on cpu the same code as the precise ones); `T.ieee_*` are correctly rounded",
             "(0.5 ulp) in both modes. 16-bit float math is computed in float32 and rounded once, so its error is",
             "at most 0.5 ulp of the 16-bit type plus the float32 error below.", "",
             "Domains: exp, __exp [-87.3, 88.7]; exp2 [-126, 127.9]; log, log2, sqrt, __log, ieee_fsqrt: positive",
             "normal floats (log-uniform); rsqrt [2^-125, 2^125]; tanh [-10, 10]; sigmoid [-100, 100] (and +-200); sin, cos",
             "[-100, 100] (absolute error: the ulp error of any float32 sin near its zeros is unbounded);",
             "__sin, __cos [-pi, pi]; pow: x in [2^-10, 2^10], y in [-8, 8]; ieee_*: |x| in [2^-60, 2^60]",
             "(fmaf [2^-30, 2^30]), both signs. On cuda, float `T.exp2` is the hardware's ex2 with results",
             "below 2^-126 flushed to zero (+0 for inputs below -126 instead of a subnormal; one instruction",
             "instead of exp2f's four); `TL_DISABLE_EXP2_FTZ` keeps exp2f's subnormal results.", ""]
    for target in ("cpu", "cuda"):
        t = data.get(target, {})
        lines.append(f"## {target}")
        lines.append("")
        meta = t.get("meta")
        if meta:
            lines.append(f"Measured {meta['date']} on {meta['device']}, {meta['points']} points per function.")
        else:
            lines.append("**Not measured yet**: this column needs a GPU. `scripts/gpu_check.sh` runs")
            lines.append("`bench/math_accuracy.py --target cuda` and `--merge` publishes its output here. Until then the")
            lines.append("bounds below are NVIDIA's documented maxima for the CUDA math library (precise mode; sigmoid")
            lines.append("from its expf, add and division) and exactness of the `T.ieee_*` forms.")
        lines.append("")
        lines.append("| function | precise: max ulp | rel | abs | bound | fast: max ulp | rel | abs | bound |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        names = list(functions())
        for name in names:
            cells = [name]
            for mode in ("precise", "fast"):
                m = t.get(mode, {}).get(name)
                if not m or m.get("max_ulp") is None:
                    b = (m or {}).get("bound", {})
                    cells += ["—", "—", "—", _fmt_bound(b) if b else "—"]
                    continue
                cells += [f"{m['max_ulp']:.3g}", f"{m['max_rel']:.2e}", f"{m['max_abs']:.2e}", _fmt_bound(m["bound"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _fmt_bound(b):
    if "not_correctly_rounded" in b:
        return "correctly rounded"
    if "max_abs" in b:
        return f"≤ {b['max_abs']:.2g} abs"
    return f"≤ {b['max_ulp']:g} ulp"


def load_published():
    if os.path.exists(RESULTS):
        with open(RESULTS) as f:
            return json.load(f)
    return {}


def publish(data):
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(DOC, "w") as f:
        f.write(render(data) + "\n")


def device_name(target):
    if target == "cuda":
        import torch
        return torch.cuda.get_device_name(0)
    import platform
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model} (g++ -O2 -march=native)"


def documented_cuda_bounds():
    rows = {}
    for n, v in CUDA_DOCUMENTED["precise"].items():
        bound = {"max_abs": v[1]} if isinstance(v, tuple) else {"max_ulp": float(v)}
        rows[n] = {"bound": bound, "max_ulp": None}
    for n, spec in functions().items():
        if spec[5] == "exact":
            rows[n] = {"bound": {"max_ulp": 0.5, "not_correctly_rounded": 0}, "max_ulp": None}
    fast = {n: dict(r) for n, r in rows.items() if n.startswith("ieee_")}
    return {"precise": rows, "fast": fast}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=("cpu", "cuda"))
    ap.add_argument("--points", type=int, default=1 << 20)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--merge")
    ap.add_argument("-k", nargs="*")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "python"))
    if a.merge:
        with open(a.merge) as f:
            run = json.load(f)
        data = load_published()
        data.update(run)
        publish(data)
        print(f"published {', '.join(run)} into {RESULTS} and {DOC}")
        return
    if not a.target:
        ap.error("--target is required (or --merge)")
    res = measure(a.target, points=a.points, only=a.k)
    res["meta"] = {"date": datetime.date.today().isoformat(), "device": device_name(a.target), "points": a.points}
    run = {a.target: res}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(run, f, indent=1, sort_keys=True)
    if a.update:
        data = load_published()
        data.update(run)
        if "meta" not in data.get("cuda", {}):  # no GPU run published yet: NVIDIA's documented bounds
            data["cuda"] = documented_cuda_bounds()
        publish(data)
        print(f"wrote {RESULTS} and {DOC}")


if __name__ == "__main__":
    main()
