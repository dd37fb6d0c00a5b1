"""Run-time ISA dispatch on cpu (docs/TARGET_CPU.md, "Instruction sets"): kernels are compiled for the
ISA set the CPU reports (not -march=native), the set is part of the kernel cache key, and the
pass config `tl.cpu_isa` / the environment variable TL_CPU_ISA force a lower one. Every path is
checked against numpy in float64 on random inputs."""
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tilelang

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


from host_cpu import cpu_flags  # noqa: E402  (tests/python, put on sys.path by conftest.py)


FLAGS = cpu_flags()
HAS_AVX2 = {"avx2", "fma", "f16c"} <= FLAGS
HAS_AVX512 = HAS_AVX2 and {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= FLAGS


def lib_of(kernel):
    lib = ctypes.CDLL(os.path.join(kernel.artifact_dir, "kernel.so"))
    lib.tl_kernel_isa.restype = ctypes.c_char_p
    return lib


def build_isa(kernel):
    sym = ctypes.c_char.in_dll(lib_of(kernel), "tl_kernel_build_isa")  # a char array, not a pointer
    return ctypes.string_at(ctypes.addressof(sym)).decode()


def uses_zmm(kernel):
    out = subprocess.run(["objdump", "-d", os.path.join(kernel.artifact_dir, "kernel.so")], capture_output=True,
                         text=True).stdout
    return "zmm" in out


# Odd sizes: row, vector and lane tails of the micro-kernels.
M, N, K, BM, BN, BK = 100, 72, 50, 32, 40, 16


def run_gemm(pass_configs=None, seed=0):
    k = tilelang.compile(zoo.gemm(M, N, K, BM, BN, BK, "float32", "float32", "float32"), target="cpu",
                         pass_configs=pass_configs or {})
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=0, atol=1e-4)
    return k


def test_native_build_records_the_host_set():
    k = run_gemm()
    built = build_isa(k)
    if HAS_AVX512:
        assert built.startswith("avx2,avx512"), built
        assert lib_of(k).tl_kernel_isa().decode().startswith("avx512")
    elif HAS_AVX2:
        assert built == "avx2", built
    for f in ("amx_tile", "amx_bf16", "amx_int8"):
        if f in built.split(","):
            assert f in FLAGS, (f, built)  # never claims a feature the CPU does not report


@pytest.mark.skipif(not HAS_AVX2, reason="forcing avx2 needs an AVX2 CPU")
def test_forced_avx2_changes_the_key_and_matches_float64():
    native = run_gemm()
    forced = run_gemm({"tl.cpu_isa": "avx2"}, seed=1)
    assert build_isa(forced) == "avx2"
    assert lib_of(forced).tl_kernel_isa().decode() == "avx2"
    assert forced.artifact_dir != native.artifact_dir
    if shutil.which("objdump"):
        assert not uses_zmm(forced), "an avx2 build must not contain AVX-512 instructions"
        if HAS_AVX512:
            assert uses_zmm(native)


def test_forced_portable_through_the_pass_config():
    k = run_gemm({"tl.cpu_isa": "portable"}, seed=2)
    assert build_isa(k) == "portable"
    assert lib_of(k).tl_kernel_isa().decode() == "portable"


ENV_SCRIPT = r"""
import sys, ctypes, os
sys.path.insert(0, sys.argv[1])
import test_cpu_isa_dispatch as t
k = t.run_gemm(seed=3)
print(t.build_isa(k), t.lib_of(k).tl_kernel_isa().decode(), k.artifact_dir)
"""


@pytest.mark.skipif(not HAS_AVX2, reason="needs an AVX2 CPU")
@pytest.mark.parametrize("var", ["TL_CPU_ISA", "TL_CPU_PRETEND_HOST_ISA"])
def test_environment_forces_avx2_in_a_fresh_process(var):
    """TL_CPU_ISA=avx2 caps the build; TL_CPU_PRETEND_HOST_ISA=avx2 makes the process see an AVX2-only
    host (as if the cache had moved to another machine): either way an AVX2 kernel is built under
    its own key and gives numpy's values; the native kernel is not reused."""
    native = run_gemm(seed=3)
    env = dict(os.environ, **{var: "avx2"})
    r = subprocess.run([sys.executable, "-c", ENV_SCRIPT, HERE], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    built, tier, art = r.stdout.split()[-3:]
    assert built == "avx2" and tier == "avx2", r.stdout
    if HAS_AVX512:
        assert art != native.artifact_dir


def test_bad_cap_is_a_value_error():
    with pytest.raises(ValueError, match="tl.cpu_isa"):
        run_gemm({"tl.cpu_isa": "avx1024"})


def test_another_include_directory_in_the_same_process_changes_the_key(tmp_path, monkeypatch):
    """The headers' hash is part of the key: switching TILELANG_INCLUDE_DIR within one process (as
    bench/cpu_flash.py --old-include does) builds the kernel again from the other headers instead of
    returning the one built from the first directory's (a memo once kept the first hash)."""
    first = run_gemm()
    inc = tmp_path / "include"
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "include"), inc)
    with open(inc / "tl" / "cpu" / "kernel.h", "a") as f:
        f.write("\n/* a different header tree */\n")
    monkeypatch.setenv("TILELANG_INCLUDE_DIR", str(inc))
    second = run_gemm(seed=3)
    assert second.artifact_dir != first.artifact_dir
    monkeypatch.delenv("TILELANG_INCLUDE_DIR")
    again = run_gemm(seed=4)
    assert again.artifact_dir == first.artifact_dir


VECTOR_WIDTH_SCRIPT = r"""
import os, subprocess, sys
import numpy as np
import tilelang
import tilelang.language as T

@T.prim_func
def axpb(A: T.Tensor((4096,), "float32"), B: T.Tensor((4096,), "float32")):
    with T.Kernel(4, threads=1) as bx:
        for i in T.Parallel(1024):
            B[bx * 1024 + i] = A[bx * 1024 + i] * 2.5 - 1.0

k = tilelang.compile(axpb, target="cpu", verbose=True)
a = np.random.default_rng(5).standard_normal(4096).astype(np.float32)
b = np.empty_like(a)
k(a, b)
np.testing.assert_allclose(b, a.astype(np.float64) * 2.5 - 1.0, rtol=1e-6, atol=1e-6)
asm = subprocess.run(["objdump", "-d", os.path.join(k.artifact_dir, "kernel.so")], capture_output=True,
                     text=True).stdout
print("RESULT", k.artifact_dir, "zmm" in asm, "ymm" in asm)
"""


def compile_vector_width_probe(tmp_path, width):
    script = tmp_path / "vector_width_probe.py"  # @T.prim_func reads its source from a file
    script.write_text(VECTOR_WIDTH_SCRIPT)
    env = dict(os.environ)
    env.pop("TL_CPU_VECTOR_WIDTH", None)
    if width is not None:
        env["TL_CPU_VECTOR_WIDTH"] = width
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    art, zmm, ymm = r.stdout.split("RESULT")[-1].split()
    return r.stderr, art, zmm == "True", ymm == "True"


@pytest.mark.skipif(not HAS_AVX512, reason="the preferred vector width applies to AVX-512 builds")
def test_avx512_builds_prefer_512_bit_vectors_unless_told_256(tmp_path):
    """-mtune=native on an Intel server core (Sapphire / Emerald Rapids) makes GCC vectorize every
    element-wise loop with 256-bit vectors; AVX-512 builds ask for 512 (the flag is on the compile
    line and in the key), and TL_CPU_VECTOR_WIDTH=256 gives the other build under its own key."""
    log, art, zmm, ymm = compile_vector_width_probe(tmp_path, None)
    assert "-mprefer-vector-width=512" in log, log[-2000:]
    log256, art256, zmm256, ymm256 = compile_vector_width_probe(tmp_path, "256")
    assert "-mprefer-vector-width=256" in log256, log256[-2000:]
    assert art256 != art
    if shutil.which("objdump"):
        assert zmm and not ymm, "the element-wise loop of the default build should use zmm registers"
        assert ymm256 and not zmm256, "TL_CPU_VECTOR_WIDTH=256 should give a ymm loop"


def test_bad_vector_width_is_a_value_error(monkeypatch):
    monkeypatch.setenv("TL_CPU_VECTOR_WIDTH", "1024")
    if not HAS_AVX512:  # the width is read only where AVX-512 is in the set
        pytest.skip("the vector width applies to AVX-512 builds")
    with pytest.raises(ValueError, match="TL_CPU_VECTOR_WIDTH"):
        run_gemm(seed=6)
