"""Kernels build with clang++ as the system compiler (`CXX=clang++`, docs/TARGET_CPU.md): GEMMs in
float16 / bfloat16 / float32 (the ISA-dispatched micro-kernels of tl/cpu/gemm.h), softmax (reductions,
exp), and an exported library (docs/AOT.md), each checked against numpy in float64. The project itself
is built with g++ (CMake's default here)."""
import os
import shutil
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import kernel_zoo as zoo  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("clang++") is None, reason="clang++ is not installed")


@pytest.fixture(autouse=True)
def clang(monkeypatch):
    monkeypatch.setenv("CXX", "clang++")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_gemm(dtype):
    k = tilelang.compile(zoo.gemm(96, 80, 64, 32, 32, 32, dtype=dtype, out_dtype="float32"), out_idx=[2],
                         target="cpu")
    npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((96, 64)).astype(npdt)
    b = rng.standard_normal((64, 80)).astype(npdt)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(k(a, b), ref, rtol=1e-4, atol=1e-3)


def test_softmax():
    k = tilelang.compile(zoo.softmax(37, 128), out_idx=[1], target="cpu")
    x = np.random.default_rng(6).standard_normal((37, 128)).astype(np.float32) * 4
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(k(x), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_the_compiler_is_clang(tmp_path):
    """The cache keeps clang's and g++'s kernels apart, and the library really came from clang
    (its .comment section names the compiler)."""
    k = tilelang.compile(zoo.add_1d(1000), target="cpu")
    k.export_library(str(tmp_path / "add.so"))
    comment = open(tmp_path / "add.so", "rb").read()
    assert b"clang version" in comment
    so = os.path.join(k.artifact_dir, "kernel.so")
    assert b"clang version" in open(so, "rb").read()
