"""tilelang.tilesight: a cost model that estimates a kernel's time from its IR without running it.

    est = tilelang.tilesight.estimate(prim_func, target="cuda")     # or machine=tilesight.H100_SXM
    print(est)             # time, bound (compute / memory / latency / occupancy), occupancy, waves, ...
    kernel.estimate()      # the same for a compiled kernel, on its target

    ranked = tilelang.tilesight.rank([(cfg, prim_func), ...], target="cuda")   # best first, misfits last

The analysis (analysis.py) walks the tile-level IR once and counts per block the FLOPs of every tile op,
the global / shared bytes it moves and the on-chip footprint (shared memory with pipeline stages,
fragments, Ascend L1/L0/UB); the model (model.py) puts that on a machine description (machine.py:
H100 / A100 for cuda, the local cpu, the Ascend simulator's own machine model) as a roofline with
occupancy, pipeline overlap and wave quantisation. The autotuner's `top_k` and the carver's templates
use it. docs/TILESIGHT.md explains the model and its validation.
"""
import math
import re

from .analysis import GemmInfo, KernelProfile, analyze
from .machine import (A100_SXM, H100_SXM, H200_SXM, AscendMachine, CpuMachine, CudaMachine, ascend_machine, local_cpu,
                      machine_for)
from .model import Estimate, estimate_profile

__all__ = ["estimate", "lower_for_estimate", "Lowering", "analyze", "rank", "spearman", "Estimate", "KernelProfile", "GemmInfo", "CudaMachine",
           "CpuMachine", "AscendMachine", "H100_SXM", "H200_SXM", "A100_SXM", "local_cpu", "ascend_machine", "machine_for",
           "estimate_profile", "hints"]


def _target_of(func, target):
    if target not in (None, "auto"):
        return target
    kt = getattr(func, "target", None)
    if isinstance(kt, str) and kt:
        return kt
    try:
        from .analysis import _prim_of
        body = _prim_of(func).body
        if "is_npu" in repr(body)[:4000]:
            return "ascend"
    except Exception:  # noqa: BLE001
        pass
    return "auto"


def estimate(func, target="auto", machine=None, dyn=None, compile_options=None, lowering=None) -> Estimate:
    """TileSight's Estimate of `func` (a @T.prim_func, PrimFunc or compiled kernel) on `target`
    ("cpu", "cuda" = H100 SXM, "cuda -arch=sm_80" = A100, "ascend", "auto": the kernel's own target or
    this machine's) or on an explicit `machine` description. `dyn`: values of dynamic dimensions.
    A kernel that cannot run there (shared memory, registers, UB) gives fits=False with the reasons.
    `compile_options` (a dict of tilelang.compile's target / pass_configs / compile_flags): how `func`
    will be compiled if it is kept; on sm_90a the lowering the estimate reads is then done with those
    options and reused by that compile (the autotuner's top_k passes them). `lowering`: what
    `lower_for_estimate(func, target, machine, compile_options)` returned, when the compiler's part
    was run ahead (in another thread); the estimate is the same as without it."""
    m = machine_for(_target_of(func, target), machine)
    if isinstance(m, AscendMachine):
        # Ascend: the analysis reads the lowered program (scopes L1 / L0 / UB assigned, gemms expanded
        # into their copies and cube instructions); lowering is cheap and runs nothing. A kernel whose
        # buffers do not fit is refused by the memory planner, which is the fit check here.
        lowered = (lowering if lowering is not None else _lower(func, m, compile_options)).value
        if isinstance(lowered, Estimate):
            return lowered
        return estimate_profile(analyze(lowered, dyn), m)
    p = analyze(func, dyn)
    if isinstance(m, CudaMachine) and m.sm_version >= 90:
        if lowering is None:
            lowering = _lower(func, m, compile_options)
        _cuda_lowering_facts(p, lowering)
        if p.lowering_error:
            # The description's own reasons first (when it sees the misfit too), then the compiler's.
            described = estimate_profile(p, m)
            return Estimate(kernel=p.name, machine=m.name, target=m.target, time_s=math.inf, bound="does not fit",
                            fits=False, reasons=(list(described.reasons) if not described.fits else [])
                            + [f"the cuda lowering rejects it: {p.lowering_error}"])
    return estimate_profile(p, m)


class Lowering:
    """The compiler's part of an estimate, done ahead (`lower_for_estimate`): the sm_90a kernel source
    or the compiler's exception (cuda), the lowered program or a does-not-fit Estimate (Ascend), or
    nothing (targets whose estimate lowers nothing)."""
    __slots__ = ("value", "error")

    def __init__(self, value=None, error=None):
        self.value, self.error = value, error


def lower_for_estimate(func, target="auto", machine=None, compile_options=None) -> Lowering:
    """The part of `estimate(func, target, machine, compile_options=...)` that runs the compiler: on
    sm_90a the lowering and code generation it reads (kept for the compile of `func` with
    `compile_options`), on Ascend the lowered program; nothing for other targets. The C++ runs
    without the GIL, so the autotuner runs these in its threads and passes each result to
    `estimate(..., lowering=)` in one thread (the model is Python: there it holds the GIL once,
    instead of its threads taking turns)."""
    return _lower(func, machine_for(_target_of(func, target), machine), compile_options)


def _lower(func, m, compile_options):
    if isinstance(m, AscendMachine):
        return Lowering(_ascend_lowered(func, m))
    if isinstance(m, CudaMachine) and m.sm_version >= 90:
        from .analysis import _prim_of
        try:
            return Lowering(_lower_for_estimate(_prim_of(func), compile_options))
        except Exception as e:  # noqa: BLE001 - _cuda_lowering_facts decides what a failure means
            return Lowering(error=e)
    return Lowering()


def _lower_for_estimate(prim, compile_options):
    """The sm_90a kernel source the estimate reads. With `compile_options` whose target resolves to
    sm_90a, lowered as tilelang.compile will lower it with those options, and kept for that compile
    (runtime/compile.h, prelower); otherwise lowered for sm_90a with the default options."""
    from .. import _core
    if compile_options:
        from ..jit.kernel import prelower
        target = compile_options.get("target") or "auto"
        resolved = str(_core.resolve_target(str(getattr(target, "tilelang_target", target)), prim))
        if "sm_90a" in resolved:
            return prelower(prim, resolved, compile_options.get("pass_configs"),
                            compile_options.get("compile_flags"))[1]
    return _core.cuda.lower_func(prim, "sm_90a", {})[1]


_SIZES = {"float": 4, "double": 8, "int": 4, "tl::half_t": 2, "tl::bfloat16_t": 2, "signed char": 1,
          "unsigned char": 1, "short": 2, "long long": 8}
_ARRAY_RE = re.compile(r"(float|double|int|tl::half_t|tl::bfloat16_t|signed char|unsigned char|short|long long) "
                       r"\w+\[(\d+)\];")
_LAUNCH_BOUNDS_RE = re.compile(r"__launch_bounds__\((\d+)")


def _cuda_lowering_facts(p, lowering):
    """Whether the cuda pipeline warp-specializes the kernel (and makes it persistent), from its
    sm_90a lowering (`lowering`, see _lower: lowering and code generation only, no NVRTC). Left unset
    when lowering failed for another reason than the compiler refusing the kernel (the estimate then
    assumes the plain pipelined form)."""
    from ..errors import LayoutError, ResourceError
    e = lowering.error
    if isinstance(e, (LayoutError, ResourceError, NotImplementedError)):
        # What compiling it would raise too (ResourceError: the compiler's shared memory plan, with
        # its alignment and barriers, over the architecture's limit): dropped before any NVRTC run,
        # so that a top_k pick does not fail to compile and cost another compile round.
        p.lowering_error = str(e).splitlines()[0][:300]
        return
    if e is not None:  # anything else: estimated as written
        return
    src = lowering.value
    m = _LAUNCH_BOUNDS_RE.search(src)
    p.warp_specialized = bool(m) and int(m.group(1)) > p.threads and "tl::tma_load" in src
    p.persistent = "\npersistent 1" in src
    arrays = sorted((_SIZES[t] * int(n) for t, n in _ARRAY_RE.findall(src)), reverse=True)
    # The largest array (an accumulator) is live throughout; the others (scores and their casts,
    # row statistics) share registers over their shorter lives: counted at half.
    p.lowered_local_bytes = (arrays[0] + sum(arrays[1:]) // 2) if arrays else 0


def _ascend_lowered(func, m):
    from .. import _core
    from ..errors import ResourceError
    from .analysis import _prim_of
    stage = getattr(func, "stage_func", None)
    if stage is not None and str(getattr(func, "target", "")).startswith("ascend"):
        return stage("final")
    prim = _prim_of(func)
    model = "A3" if "A3" in m.name else "A2"
    try:
        return _core.ascend.compile(prim, None, f"ascend -model={model}").lowered
    except ResourceError as e:
        return Estimate(kernel=getattr(prim, "name", "kernel"), machine=m.name, target=m.target, time_s=math.inf,
                        bound="does not fit", fits=False, reasons=[str(e).splitlines()[0]])


def rank(candidates, target="auto", machine=None, dyn=None):
    """Estimates of `candidates` (an iterable of (key, func) pairs), fastest first; those that do not fit
    come last, each with its reasons. Returns a list of (key, Estimate)."""
    out = [(k, estimate(f, target, machine, dyn)) for k, f in candidates]
    out.sort(key=lambda kv: (not kv[1].fits, kv[1].time_s))
    return out


def spearman(xs, ys):
    """Spearman's rank correlation of two equal-length sequences (average ranks for ties)."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("spearman needs two sequences of the same length >= 2")

    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    rx, ry = ranks(list(xs)), ranks(list(ys))
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    syy = math.sqrt(sum((b - my) ** 2 for b in ry))
    if sxx == 0 or syy == 0:
        return 0.0
    return sxy / (sxx * syy)


from . import hints  # noqa: E402
