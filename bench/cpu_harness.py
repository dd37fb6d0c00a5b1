"""Interim runner for cpu kernels (bench/cpu_harness.cc through ctypes), used by the benchmarks
only while tilelang.jit / tilelang.compile are not available on this branch.

It builds libtl_cpu_harness.so from the compiler's objects in build/ (make build first), then
compiles a T.prim_func by its textual IR: lower_cpu -> codegen_cpu -> g++ -> dlopen."""
import ctypes
import glob
import os
import subprocess
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
LIB = os.path.join(BUILD, "bench", "libtl_cpu_harness.so")
SRC = os.path.join(ROOT, "bench", "cpu_harness.cc")


class TLArg(ctypes.Union):
    _fields_ = [("ptr", ctypes.c_void_p), ("i64", ctypes.c_int64), ("f64", ctypes.c_double)]


def _objects():
    objs = glob.glob(os.path.join(BUILD, "CMakeFiles", "tl_core.dir", "src", "**", "*.o"), recursive=True)
    if not objs:
        raise RuntimeError("no compiler objects under build/: run `make build` first")
    return objs


def _lib():
    objs = _objects()
    newest = max(os.path.getmtime(p) for p in objs + [SRC])
    if not os.path.exists(LIB) or os.path.getmtime(LIB) < newest:
        os.makedirs(os.path.dirname(LIB), exist_ok=True)
        cmd = ["g++", "-std=c++20", "-O2", "-fPIC", "-shared", f"-I{ROOT}/src", f"-I{ROOT}/include",
               f'-DTL_SOURCE_DIR="{ROOT}"', SRC, *objs, "-o", LIB, "-ldl", "-lpthread"]
        subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(LIB)
    lib.tlb_build.restype = ctypes.c_void_p
    lib.tlb_build.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.tlb_last_error.restype = ctypes.c_char_p
    lib.tlb_source.restype = ctypes.c_char_p
    lib.tlb_source.argtypes = [ctypes.c_void_p]
    lib.tlb_so_path.restype = ctypes.c_char_p
    lib.tlb_so_path.argtypes = [ctypes.c_void_p]
    lib.tlb_compile_seconds.restype = ctypes.c_double
    lib.tlb_compile_seconds.argtypes = [ctypes.c_void_p]
    lib.tlb_lower_seconds.restype = ctypes.c_double
    lib.tlb_lower_seconds.argtypes = [ctypes.c_void_p]
    lib.tlb_pool.restype = ctypes.c_void_p
    lib.tlb_pool.argtypes = [ctypes.c_int]
    lib.tlb_api.restype = ctypes.c_void_p
    lib.tlb_api.argtypes = [ctypes.c_void_p]
    lib.tlb_run.restype = ctypes.c_int
    lib.tlb_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(TLArg), ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    return lib


_LIB = None
_APIS = {}


def lib():
    global _LIB
    if _LIB is None:
        _LIB = _lib()
    return _LIB


def api(threads):
    if threads not in _APIS:
        pool = lib().tlb_pool(threads)
        _APIS[threads] = (pool, lib().tlb_api(pool))
    return _APIS[threads][1]


class HarnessKernel:
    """A compiled kernel: call it with numpy arrays (and Python scalars) in parameter order."""

    def __init__(self, func, threads=2, extra_flags=""):
        self.func = func
        self.threads = threads
        self.workdir = tempfile.mkdtemp(prefix="tl_bench_")
        h = lib().tlb_build(func.script().encode(), self.workdir.encode(), extra_flags.encode())
        if not h:
            raise RuntimeError(lib().tlb_last_error().decode())
        self._h = h
        self.compile_seconds = lib().tlb_compile_seconds(h)
        self.lower_seconds = lib().tlb_lower_seconds(h)
        self.source = lib().tlb_source(h).decode()
        self.so_path = lib().tlb_so_path(h).decode()
        self._api = api(threads)

    def pack(self, *args):
        """The TLArg array for these arguments (keep the arrays alive while it is used)."""
        slots = (TLArg * len(args))()
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                slots[i].ptr = a.ctypes.data
            elif isinstance(a, float):
                slots[i].f64 = a
            else:
                slots[i].i64 = int(a)
        return slots

    def run_packed(self, slots, reps=1):
        rc = lib().tlb_run(self._h, slots, len(slots), self._api, reps)
        if rc != 0:
            raise RuntimeError(f"kernel failed with status {rc}")

    def __call__(self, *args):
        self.run_packed(self.pack(*args))
