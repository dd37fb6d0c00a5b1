"""tilelang.testing: pytest helpers for kernel tests, as TileLang's.

    import tilelang.testing

    @tilelang.testing.requires_cuda
    def test_gemm(): ...

    if __name__ == "__main__":
        tilelang.testing.main()

`requires_cuda` (and the compute-version forms) skip a test unless a CUDA device is present, or
unless TILELANG_TESTING_CUDA_ON_CPU=1 asks to run TileLang's CUDA tests on the cpu target (their
kernels are target-neutral; torch tensors then live on the cpu: see scripts/upstream_suite.py).
In that mode the device reports compute capability TILELANG_TESTING_CUDA_ON_CPU_ARCH (default
"8.0"), so tests of sm_90-only features still skip.
"""
import importlib.util
import inspect
import os
import random
import sys

import numpy as np

__all__ = ["main", "set_random_seed", "torch_assert_close", "requires_cuda", "requires_cuda_compute_version",
           "requires_cuda_compute_version_ge", "requires_cuda_compute_version_gt", "requires_cuda_compute_version_eq",
           "requires_cuda_compute_version_lt", "requires_cuda_compute_version_le", "requires_rocm", "requires_cdna",
           "requires_cuda_or_cdna", "requires_gfx950", "requires_metal", "requires_llvm", "requires_package",
           "process_func", "regression"]


def _pytest():
    import pytest
    return pytest


def main():
    """Runs the calling test file under pytest (`if __name__ == "__main__": tilelang.testing.main()`)."""
    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(_pytest().main([test_file] + sys.argv[1:]))


def set_random_seed(seed=42):
    """Seeds Python's, numpy's and (when installed) torch's generators."""
    random.seed(seed)
    np.random.seed(seed)
    if importlib.util.find_spec("torch") is not None:
        import torch
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, check_device=True, check_dtype=True, check_layout=True, check_stride=False,
                       base_name="LHS", ref_name="RHS"):
    """Asserts that at most `max_mismatched_ratio` of the elements differ beyond atol + rtol*|b|."""
    from ..utils.tensor import torch_assert_close as impl
    return impl(tensor_a, tensor_b, rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio, verbose=verbose,
                equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                check_stride=check_stride, base_name=base_name, ref_name=ref_name)


def _cuda_on_cpu():
    return os.environ.get("TILELANG_TESTING_CUDA_ON_CPU", "").lower() in ("1", "true", "yes", "on")


def _cuda_device_present():
    from .. import _core
    try:
        ok, _why = _core.cuda.driver_available()
        return bool(ok) and _core.cuda.device_count() > 0
    except Exception:  # noqa: BLE001
        return False


def _compute_version():
    """(major, minor) of the device tests run on, or None without one."""
    if _cuda_device_present():
        from .. import _core
        return tuple(_core.cuda.device_info(0)["cc"])
    if _cuda_on_cpu():
        major, _, minor = os.environ.get("TILELANG_TESTING_CUDA_ON_CPU_ARCH", "8.0").partition(".")
        return int(major), int(minor or 0)
    return None


def _skip_unless(cond, reason):
    return _pytest().mark.skipif(not cond, reason=reason)


def _compose(func, marks):
    for m in reversed(marks):
        func = m(func)
    return func


def requires_cuda(func):
    """Skips the test without a CUDA device (see the module doc for running it on the cpu)."""
    return _compose(func, [_skip_unless(_compute_version() is not None, "needs a CUDA device")])


requires_cuda.marks = lambda: [_skip_unless(_compute_version() is not None, "needs a CUDA device")]


_MODES = {"ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b,
          "lt": lambda a, b: a < b, "eq": lambda a, b: a == b}


def requires_cuda_compute_version(major_version, minor_version=0, mode="ge"):
    """Skips the test unless the device's compute capability compares `mode` to (major, minor)."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(_MODES)}; got {mode!r}")
    want = (major_version, minor_version)
    have = _compute_version()
    ok = have is not None and _MODES[mode](have, want)
    reason = f"needs CUDA compute capability {mode} {want[0]}.{want[1]}, have " + \
        ("no device" if have is None else f"{have[0]}.{have[1]}")

    def inner(func):
        return _compose(func, [_skip_unless(ok, reason)])
    return inner


def requires_cuda_compute_version_ge(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "ge")


def requires_cuda_compute_version_gt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "gt")


def requires_cuda_compute_version_eq(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "eq")


def requires_cuda_compute_version_lt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "lt")


def requires_cuda_compute_version_le(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "le")


def _never(reason):
    def deco(func):
        return _compose(func, [_skip_unless(False, reason)])
    return deco


# Targets tilelang-cpp does not have: tests that need them are skipped with the reason.
requires_rocm = _never("tilelang-cpp has no ROCm target")
requires_cdna = _never("tilelang-cpp has no ROCm target")
requires_gfx950 = _never("tilelang-cpp has no ROCm target")
requires_metal = _never("tilelang-cpp has no Metal target")


def requires_cuda_or_cdna(func):
    return requires_cuda(func)


def requires_llvm(func):
    """TileLang's cpu target is LLVM; here the cpu target (C++ through the system compiler) is always there."""
    return func


def requires_package(*packages):
    """Skips the test unless every package is importable."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]

    def deco(func):
        return _compose(func, [_skip_unless(not missing, f"needs the package(s) {', '.join(missing)}")])
    return deco


def process_func(func, *args, **kwargs):
    """TileLang's performance-regression hook: runs `func(*args, **kwargs)` and returns its result."""
    return func(*args, **kwargs)


def regression(*args, **kwargs):
    """TileLang's performance-regression driver; not provided here (bench/ holds this project's
    benchmarks)."""
    raise NotImplementedError("not implemented: tilelang.testing.regression (TileLang's performance-regression "
                              "driver); use bench/ or tilelang.profiler.do_bench")
