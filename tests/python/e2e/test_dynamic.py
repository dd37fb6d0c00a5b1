"""A dynamic M (`T.dynamic("m")`) compiles once: the same Kernel object serves every M, with no
new compilation (counted at tilelang.jit.compile and in the on-disk cache) and correct tails."""
import os
import sys

import numpy as np
import pytest

import tilelang
import tilelang.language as T

import e2e_kernels as kb

rng = np.random.default_rng(5)
M_VALUES = [1, 5, 32, 33, 100, 257]


@pytest.fixture
def compile_counter(monkeypatch, tmp_path):
    """Counts compilations, in a fresh cache directory."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    jit_module = sys.modules["tilelang.jit"]
    real = jit_module.compile
    calls = []

    def counting(*args, **kwargs):
        calls.append(kwargs.get("target"))
        return real(*args, **kwargs)

    monkeypatch.setattr(jit_module, "compile", counting)
    return calls


def cache_entries(root):
    v1 = os.path.join(root, "v1")
    return [d for d in os.listdir(v1) if d != "staging"] if os.path.isdir(v1) else []


def test_dynamic_m_gemm_compiles_once(compile_counter):
    builds = []

    @tilelang.jit(out_idx=[-1], target="cpu")
    def matmul(N, K, block_M, block_N, block_K, dtype="float16"):
        builds.append((N, K))
        return kb.gemm(T.dynamic("m"), N, K, block_M, block_N, block_K, dtype)

    kernel = matmul(48, 40, 32, 16, 16)
    assert kernel.dynamic_vars == ["m"]
    assert [p.shape for p in kernel.params] == [("m", 40), (40, 48), ("m", 48)]
    for M in M_VALUES:
        again = matmul(48, 40, 32, 16, 16)
        assert again is kernel
        a = rng.uniform(-1, 1, (M, 40)).astype(np.float16)
        b = rng.uniform(-1, 1, (40, 48)).astype(np.float16)
        c = again(a, b)
        assert c.shape == (M, 48) and c.dtype == np.float16
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)
    assert len(builds) == 1 and compile_counter == ["cpu"]
    assert len(cache_entries(os.environ["TILELANG_CACHE_DIR"])) == 1


def test_dynamic_m_elementwise_compiles_once(compile_counter):
    @tilelang.jit(out_idx=[-1], target="cpu")
    def scale_add(N, block_M, block_N):
        return kb.scale_add_2d(T.dynamic("m"), N, block_M, block_N)

    kernel = scale_add(33, 8, 16)
    for M in M_VALUES:
        a = rng.standard_normal((M, 33)).astype(np.float32)
        b = rng.standard_normal((M, 33)).astype(np.float32)
        c = scale_add(33, 8, 16)(a, b)
        np.testing.assert_allclose(c, a.astype(np.float64) * b + 1, rtol=1e-6, atol=1e-6)
    assert scale_add(33, 8, 16) is kernel
    assert compile_counter == ["cpu"]
    assert len(cache_entries(os.environ["TILELANG_CACHE_DIR"])) == 1
    # A new process-level compile of the same builder output is a cache hit, not a new build.
    again = tilelang.compile(kb.scale_add_2d(T.dynamic("m"), 33, 8, 16), out_idx=[-1], target="cpu")
    assert again.cache_key == kernel.cache_key
    assert len(cache_entries(os.environ["TILELANG_CACHE_DIR"])) == 1


def test_dynamic_m_and_static_kernels_agree():
    """The dynamic kernel computes what a kernel specialized to each M computes."""
    dyn = tilelang.compile(kb.gemm(T.dynamic("m"), 24, 20, 16, 16, 8, "float32"), out_idx=[-1], target="cpu")
    b = rng.uniform(-1, 1, (20, 24)).astype(np.float32)
    for M in (7, 40):
        static = tilelang.compile(kb.gemm(M, 24, 20, 16, 16, 8, "float32"), out_idx=[-1], target="cpu")
        a = rng.uniform(-1, 1, (M, 20)).astype(np.float32)
        np.testing.assert_allclose(dyn(a, b), static(a, b), rtol=1e-6, atol=1e-6)


def test_every_gemm_dimension_dynamic():
    m, n, k = T.dynamic("m"), T.dynamic("n"), T.dynamic("k")
    kernel = tilelang.compile(kb.gemm(m, n, k, 32, 32, 16, "float32", transpose_B=True), out_idx=[-1], target="cpu")
    assert sorted(kernel.dynamic_vars) == ["k", "m", "n"]
    for M, N, K in [(5, 7, 3), (64, 33, 100), (1, 1, 1)]:
        a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
        b = rng.uniform(-1, 1, (N, K)).astype(np.float32)
        np.testing.assert_allclose(kernel(a, b), a.astype(np.float64) @ b.T, rtol=1e-5, atol=1e-5)


def test_dynamic_length_vector_including_empty():
    kernel = tilelang.compile(kb.add_1d(T.dynamic("n"), 128), out_idx=[-1], target="cpu")
    for N in [0, 1, 127, 129, 10000]:
        a = rng.standard_normal(N).astype(np.float32)
        b = rng.standard_normal(N).astype(np.float32)
        c = kernel(a, b)
        assert c.shape == (N,)
        np.testing.assert_array_equal(c, a + b)
