"""The body of the fuzzing tier, run in a child process by test_fuzz.py (so that a crash is a failed
test, not a dead test run): random programs from fuzz_programs.py are compiled for one target and
called with random valid arguments (every output compared with numpy within its error bound) and
with hostile ones (each must be a typed error, or — where the arguments are valid after all — give
the right result). Prints one JSON line per program: {"program", "status", "detail"}; statuses
"ok" and "unsupported" (a NotImplementedError at compile time) pass, everything else fails.

    python fuzz_runner.py --target cpu --seed 1234 --programs 8"""
import argparse
import json
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tilelang  # noqa: E402
from fuzz_programs import npu_program, random_program  # noqa: E402

TYPED_CALL_ERRORS = (tilelang.ArgumentError, TypeError, ValueError)


class Mismatch(Exception):
    pass


def check_outputs(prog, x, y, s, outs):
    for k, ((want, bound), got) in enumerate(zip(prog.reference(x, y, s), outs)):
        got = np.asarray(got).astype(np.float64)
        if got.shape != want.shape:
            raise Mismatch(f"output {k}: shape {got.shape}, expected {want.shape}")
        ok = (np.abs(got - want) <= 4 * bound + 1e-30) | (np.isnan(got) & np.isnan(want))
        if prog.out_dtypes[k] == "float16":  # past 65504 a float16 store overflows to +-inf
            may_overflow = np.abs(want) + 4 * bound >= 65504
            ok |= may_overflow & np.isinf(got) & (np.sign(got) == np.sign(want))
            ok &= ~((np.abs(want) - 4 * bound > 65520) & ~np.isinf(got))
        bad = ~ok
        if bad.any():
            i = int(np.argmax(bad))
            raise Mismatch(f"output {k} ({prog.out_dtypes[k]}) element {i} of {got.size}: got {got[i]!r}, expected "
                           f"{want[i]!r} +- {4 * bound[i]!r} (x={x[i]!r}, y={y[i]!r}, s={s!r})")


def call(kernel, prog, x, y, s, extra=()):
    """Calls with outputs O1, O2 passed in (O0 is allocated by the runtime)."""
    o1 = np.zeros(x.shape, prog.out_dtypes[1])
    o2 = np.zeros(x.shape, prog.out_dtypes[2])
    o0 = kernel(x, y, s, o1, o2, *extra)
    return [o0, o1, o2]


class DLPackRaises:
    def __dlpack__(self, **kw):
        raise RuntimeError("no")

    def __dlpack_device__(self):
        return (1, 0)


class DLPackGarbage:
    def __dlpack__(self, **kw):
        return 42

    def __dlpack_device__(self):
        return (1, 0)


def hostile_cases(prog, rng, x, y, s):
    """(name, args, valid): argument lists a hostile caller might pass. `valid` ones must give the
    right result; the others must raise a typed error."""
    n = x.shape[0]
    o1 = np.zeros(n, prog.out_dtypes[1])
    o2 = np.zeros(n, prog.out_dtypes[2])
    ro = np.zeros(n, prog.out_dtypes[1])
    ro.setflags(write=False)
    wrong_dtype = x.astype(np.float64 if x.dtype != np.float64 else np.float32)
    cases = [
        ("too few", (x, y, s, o1), False),
        ("too many", (x, y, s, o1, o2, o2), False),
        ("dtype", (wrong_dtype, y, s, o1, o2), False),
        ("rank", (x.reshape(1, n), y, s, o1, o2), False),
        ("strided", (np.repeat(x, 2)[::2], y, s, o1, o2), n == 1),
        ("read-only output", (x, y, s, ro, o2), False),
        ("output is input", (x, y, s, x, o2), x.dtype == o1.dtype),
        ("scalar as tensor", (x, y, np.full(n, s, np.float32), o1, o2), False),
        ("tensor as scalar", (s, y, s, o1, o2), False),
        ("string scalar", (x, y, "1.0", o1, o2), False),
        ("None", (None, y, s, o1, o2), False),
        ("huge int scalar", (x, y, 2 ** 80, o1, o2), False),
        ("numpy scalar", (x, y, np.float16(s), o1, o2), True),
        ("list", (list(x), y, s, o1, o2), False),
        ("dlpack raises", (DLPackRaises(), y, s, o1, o2), False),
        ("dlpack garbage", (DLPackGarbage(), y, s, o1, o2), False),
        ("bytes", (memoryview(x.tobytes()), y, s, o1, o2), False),
    ]
    if prog.dynamic:
        cases.append(("lengths disagree", (x, y[: max(n - 1, 0)], s, o1, o2), False))
        cases.append(("empty", (x[:0], y[:0], s, o1[:0], o2[:0]), True))
    else:
        cases.append(("wrong length", (np.concatenate([x, x[:1]]), y, s, o1, o2), False))
    return cases


def run_hostile(kernel, prog, rng, x, y, s):
    for name, args, valid in hostile_cases(prog, rng, x, y, s):
        # The reference reads the inputs as they were: an output may alias an input ("output is input").
        before = [np.array(a) if isinstance(a, np.ndarray) else a for a in args[:3]]
        try:
            out = kernel(*args)
        except TYPED_CALL_ERRORS as e:
            if valid:
                raise Mismatch(f"hostile case '{name}' is valid but raised {type(e).__name__}: {e}") from None
            continue
        if not valid:
            raise Mismatch(f"hostile case '{name}' was accepted")
        xs, ys, ss = before
        check_outputs(prog, np.ascontiguousarray(xs), np.asarray(ys), float(ss), [out, args[3], args[4]])


def run_program(target, prog, rng, calls):
    try:
        f = prog.kernel(target)
        kernel = tilelang.compile(f, out_idx=[3], target=target)
    except NotImplementedError as e:
        return "unsupported", str(e)[:300]
    for _ in range(calls):
        n = int(rng.integers(0, 300)) if prog.dynamic else prog.n
        x, y, s = prog.inputs(rng, n)
        check_outputs(prog, x, y, s, call(kernel, prog, x, y, s))
    x, y, s = prog.inputs(rng)
    run_hostile(kernel, prog, rng, x, y, s)
    # Non-finite inputs: no comparison (NaN ordering is target-defined), but no crash either.
    if x.dtype.kind == "f" and prog.n >= 3:
        x = x.copy()
        x[:3] = [np.nan, np.inf, -np.inf]
        call(kernel, prog, x, y, s)
    return "ok", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--programs", type=int, default=8)
    ap.add_argument("--calls", type=int, default=2)
    a = ap.parse_args()
    for i in range(a.programs):
        seed = a.seed * 1000 + i
        rng = np.random.default_rng(seed)
        prog = npu_program(rng, seed) if a.target == "ascend" else random_program(rng, seed)
        try:
            status, detail = run_program(a.target, prog, rng, a.calls)
        except Mismatch as e:
            status, detail = "mismatch", str(e)
        except Exception as e:  # noqa: BLE001 - every other outcome is a finding
            status, detail = "error", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"
        print(json.dumps({"program": repr(prog), "seed": seed, "status": status, "detail": detail}), flush=True)


if __name__ == "__main__":
    main()
