"""torch stays optional for the core: with torch made unimportable, the eager style, lazy jit, the
profiler and the autotuner work on numpy arrays."""
import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import sys
    sys.modules["torch"] = None  # `import torch` raises ImportError from here on
    import numpy as np
    import tilelang
    import tilelang.language as T

    @tilelang.jit
    def add(A, B, BLOCK: int = 64):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B: T.Tensor((N,), T.float32)
        C = T.empty((N,), T.float32)
        with T.Kernel(T.ceildiv(N, BLOCK), threads=64) as bx:
            for i in T.Parallel(BLOCK):
                C[bx * BLOCK + i] = A[bx * BLOCK + i] + B[bx * BLOCK + i]
        return C

    rng = np.random.default_rng(0)
    a = rng.standard_normal(256).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    c = add(a, b)
    assert isinstance(c, np.ndarray)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)

    kernel = add.compile(N=256, BLOCK=32)
    profiler = kernel.get_profiler()
    x, y = profiler._get_inputs()
    assert isinstance(x, np.ndarray)
    profiler.assert_allclose(lambda p, q: p + q)
    assert profiler.do_bench(warmup=1, rep=3, backend="event") > 0

    @tilelang.autotune(configs=[{"BLOCK": 32}, {"BLOCK": 64}], warmup=1, rep=3, ref_prog=lambda p, q: p + q,
                       verbose=False)
    @tilelang.jit
    def tuned_add(A, B, BLOCK: int = 64):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B: T.Tensor((N,), T.float32)
        C = T.empty((N,), T.float32)
        with T.Kernel(T.ceildiv(N, BLOCK), threads=64) as bx:
            for i in T.Parallel(BLOCK):
                C[bx * BLOCK + i] = A[bx * BLOCK + i] + B[bx * BLOCK + i]
        return C

    np.testing.assert_allclose(tuned_add(a, b), a + b, rtol=1e-6)
    @tilelang.jit(out_idx=-1)
    def ones(n):
        @T.prim_func
        def main(A: T.Tensor((n,), T.float32)):
            with T.Kernel(1, threads=32):
                T.fill(A, 1.0)
        return main

    out = ones(16)()  # no tensor argument and no torch: numpy outputs
    assert isinstance(out, np.ndarray) and (out == 1).all()
    print("numpy-only ok")
""")


def test_core_runs_without_torch(tmp_path):
    if os.environ.get("TL_COMPAT_DEVICE", "cpu") != "cpu":
        pytest.skip("numpy arrays run on the cpu target")
    script = tmp_path / "numpy_only.py"  # kernels are parsed from their source file
    script.write_text(PROGRAM)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TILELANG_DISABLE_CUDA="1")
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "numpy-only ok" in out.stdout
