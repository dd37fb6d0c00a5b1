"""kernel.export_library (docs/AOT.md): a standalone shared library plus a C header, called here the
way a C program calls it (ctypes, no tilelang on the call path), and examples/aot's C++ program
built with CMake and run (scripts/aot_example.sh). cuda: the library and the example compile here;
scripts/gpu_check.sh (step aot_cuda) runs them on a GPU."""
import ctypes
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _core

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# What an exported library may need at load time: the C and C++ runtimes, nothing of tilelang or Python.
SYSTEM_LIBS = {"libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6", "ld-linux-x86-64.so.2",
               "libpthread.so.0", "libdl.so.2", "ld-linux-aarch64.so.1"}


def _needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))


def _exported(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def _scale_add():
    M, N = T.dynamic("M"), T.dynamic("N")

    @T.prim_func
    def scale_add(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"),
                  alpha: T.float32, shift: T.int32):
        with T.Kernel(T.ceildiv(M, 16), threads=64) as bx:
            for i, j in T.Parallel(16, N):
                if bx * 16 + i < M:
                    C[bx * 16 + i, j] = A[bx * 16 + i, j] * alpha + B[bx * 16 + i, j] + T.cast(shift, "float32")

    return scale_add


def test_cpu_library_runs_without_tilelang(tmp_path):
    kernel = tilelang.compile(_scale_add(), target="cpu")
    header = kernel.export_library(str(tmp_path / "libscale.so"))
    so = str(tmp_path / "libscale.so")
    assert header == str(tmp_path / "libscale.h")
    text = open(header).read()
    assert "int32_t scale(float* A, float* B, float* C, float alpha, int32_t shift, int64_t M, int64_t N);" in text
    assert _needed(so) <= SYSTEM_LIBS, _needed(so)
    assert _exported(so) == {"scale", "scale_last_error", "scale_set_num_threads"}

    lib = ctypes.CDLL(so)
    fp = ctypes.POINTER(ctypes.c_float)
    lib.scale.argtypes = [fp, fp, fp, ctypes.c_float, ctypes.c_int32, ctypes.c_int64, ctypes.c_int64]
    lib.scale.restype = ctypes.c_int32
    lib.scale_last_error.restype = ctypes.c_char_p
    rng = np.random.default_rng(18)
    for m, n, threads in ((37, 19, 0), (1, 5, 1), (64, 33, 3)):
        lib.scale_set_num_threads(threads)
        a = rng.standard_normal((m, n)).astype(np.float32)
        b = rng.standard_normal((m, n)).astype(np.float32)
        c = np.full((m, n), np.nan, np.float32)
        ptr = lambda x: x.ctypes.data_as(fp)  # noqa: E731
        assert lib.scale(ptr(a), ptr(b), ptr(c), 1.5, -2, m, n) == 0
        ref = a.astype(np.float64) * 1.5 + b.astype(np.float64) - 2
        np.testing.assert_allclose(c, ref, rtol=1e-6, atol=1e-6)
    # A negative size is refused with a message, before the kernel runs.
    assert lib.scale(ptr(a), ptr(b), ptr(c), 1.0, 0, -3, n) == 2
    assert b"dynamic dimension 'M' is negative (-3)" in lib.scale_last_error()


def test_example_program_cpu(tmp_path):
    """examples/aot: the C++ program, built by CMake against gemm.so/gemm.h, checks its GEMM against a
    double-precision reference on random inputs (M = 1000 and M = 1)."""
    env = dict(os.environ, PYTHON=sys.executable)
    r = subprocess.run([os.path.join(ROOT, "scripts", "aot_example.sh"), "cpu", str(tmp_path)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "aot_gemm: M=1000 N=256 K=128 OK" in r.stdout
    assert "aot_gemm: M=1 N=256 K=128 OK" in r.stdout
    assert _needed(str(tmp_path / "gemm.so")) <= SYSTEM_LIBS


def _nvrtc_missing():
    ok, why = _core.cuda.nvrtc_available()
    return None if ok else why


@pytest.mark.skipif(_nvrtc_missing() is not None, reason=f"NVRTC not available: {_nvrtc_missing()}")
def test_cuda_library_and_example_compile(tmp_path):
    """cuda: the library embeds the cubin and its PTX, loads the driver with dlopen (no libcuda, no
    NVRTC, no CUDA runtime among its dependencies), takes a stream; the example compiles against it."""
    sys.path.insert(0, os.path.join(ROOT, "examples", "aot"))
    try:
        import export_gemm
    finally:
        sys.path.pop(0)
    kernel = tilelang.compile(export_gemm.gemm_kernel(), target="cuda -arch=sm_80")
    header = kernel.export_library(str(tmp_path / "gemm.so"))
    assert "int32_t gemm(uint16_t* A, uint16_t* B, float* C, int64_t M, void* stream);" in open(header).read()
    so = str(tmp_path / "gemm.so")
    assert _needed(so) <= SYSTEM_LIBS, _needed(so)
    assert _exported(so) == {"gemm", "gemm_last_error"}
    blob = open(so, "rb").read()
    assert b"\x7fELF" in blob[64:]  # the embedded cubin
    assert b".target sm_80" in blob  # and its PTX
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", os.path.join(ROOT, "examples", "aot"), "-B", str(build), f"-DTL_AOT_DIR={tmp_path}",
                    "-DTL_AOT_TARGET=cuda"], check=True, capture_output=True)
    r = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert os.access(build / "aot_gemm", os.X_OK)


def test_index_width_limit_is_checked_like_the_runtime(tmp_path):
    """A dimension that would overflow the kernel's 32-bit indices is refused by the C entry, as
    tilelang's own call path refuses it (docs/ARCHITECTURE.md, "Index width")."""
    M = T.dynamic("M")

    @T.prim_func
    def pairs(A: T.Tensor((M, 2), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < M:
                    B[bx * 64 + i] = A[bx * 64 + i, 0] + A[bx * 64 + i, 1]

    kernel = tilelang.compile(pairs, target="cpu")
    kernel.export_library(str(tmp_path / "pairs.so"))
    lib = ctypes.CDLL(str(tmp_path / "pairs.so"))
    lib.pairs.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    lib.pairs_last_error.restype = ctypes.c_char_p
    assert lib.pairs(None, None, 2**30 + 5) == 2  # refused before anything is read
    assert b"'M' is 1073741829, beyond the 32-bit index range" in lib.pairs_last_error()
    with pytest.raises(_core.ArgumentError, match="1073741829"):
        # The runtime's own check, for comparison (a zero-copy view with M rows, never read).
        a = np.lib.stride_tricks.as_strided(np.zeros(2, np.float32), (2**30 + 5, 2), (0, 4))
        b = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (2**30 + 5,), (0,))
        kernel(a, b)
    a = np.arange(14, dtype=np.float32).reshape(7, 2)
    b = np.zeros(7, np.float32)
    assert lib.pairs(a.ctypes.data, b.ctypes.data, 7) == 0
    np.testing.assert_array_equal(b, a[:, 0] + a[:, 1])


FAKE_DRIVER = os.path.join(ROOT, "tests", "python", "cuda", "fake_libcuda.c")
_LAUNCH_PROBE = r"""
import ctypes, json, sys
import numpy as np
fake = ctypes.CDLL("libcuda.so.1")  # the fake, found through LD_LIBRARY_PATH like the real one
lib = ctypes.CDLL(sys.argv[1])
lib.gemm.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
lib.gemm_last_error.restype = ctypes.c_char_p
fake.fake_set_nargs(4)
M = int(sys.argv[2])
a, b, c = np.zeros((M, 128), np.uint16), np.zeros((128, 256), np.uint16), np.zeros((M, 256), np.float32)
out = {"rc": lib.gemm(a.ctypes.data, b.ctypes.data, c.ctypes.data, M, None), "ptrs": [a.ctypes.data, b.ctypes.data,
       c.ctypes.data]}
grid, block, smem, args = (ctypes.c_uint * 3)(), (ctypes.c_uint * 3)(), ctypes.c_uint(), (ctypes.c_uint64 * 16)()
fake.fake_last_launch(grid, block, ctypes.byref(smem), args)
out.update(grid=list(grid), block=list(block), smem=smem.value, args=list(args)[:4])
out["misaligned"] = lib.gemm(a.ctypes.data + 2, b.ctypes.data, c.ctypes.data, M, None)
out["misaligned_error"] = lib.gemm_last_error().decode()
out["negative"] = lib.gemm(a.ctypes.data, b.ctypes.data, c.ctypes.data, -1, None)
print(json.dumps(out))
"""


@pytest.mark.skipif(_nvrtc_missing() is not None, reason=f"NVRTC not available: {_nvrtc_missing()}")
def test_cuda_library_launches_through_the_driver(tmp_path):
    """The exported cuda library against a fake libcuda.so.1 (tests/python/cuda/fake_libcuda.c, which
    records launches instead of running them): it creates a context, loads its cubin, and launches
    the kernel with the grid computed from M, the block, the dynamic shared memory and the arguments
    the runtime would pass; misaligned pointers and negative sizes are refused before launching."""
    import json
    sys.path.insert(0, os.path.join(ROOT, "examples", "aot"))
    try:
        import export_gemm
    finally:
        sys.path.pop(0)
    kernel = tilelang.compile(export_gemm.gemm_kernel(), target="cuda -arch=sm_80")
    kernel.export_library(str(tmp_path / "gemm.so"))
    drv = tmp_path / "driver"
    drv.mkdir()
    import shutil
    cc = [shutil.which("cc") or shutil.which("gcc")] if (shutil.which("cc") or shutil.which("gcc")) else ["g++", "-x", "c"]
    subprocess.run(cc + ["-shared", "-fPIC", "-O1", "-o", str(drv / "libcuda.so.1"), FAKE_DRIVER], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=str(drv))
    for M in (300, 64):
        p = subprocess.run([sys.executable, "-c", _LAUNCH_PROBE, str(tmp_path / "gemm.so"), str(M)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        r = json.loads(p.stdout)
        assert r["rc"] == 0
        assert r["grid"] == [256 // 64, (M + 63) // 64, 1]
        info = kernel.info()
        assert r["block"] == [info["threads"], 1, 1]
        assert r["smem"] == info["dynamic_shared_memory_bytes"]
        assert r["args"][:3] == r["ptrs"] and r["args"][3] & 0xFFFFFFFF == M
        assert r["misaligned"] == 2 and "not 16-byte aligned" in r["misaligned_error"]
        assert r["negative"] == 2
