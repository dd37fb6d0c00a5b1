"""bench/cpu_decode_variants/variant.cc (the decode GEMM harness's kernel copy, run.py): built with the
kernel build's flags against this tree's include/, its 16 blocks of 256 columns give A B for a random
16 x 4096 A and 4096 x 4096 B (float64 reference), so the harness times a correct program."""
import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HERE = os.path.join(ROOT, "bench", "cpu_decode_variants")


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_variant_computes_the_product(tmp_path, rng):
    so = str(tmp_path / "v.so")
    subprocess.run(["g++", "-std=c++17", "-O2", "-march=native", "-ffp-contract=fast", "-fPIC", "-shared",
                    "-Wno-psabi", "-I" + os.path.join(ROOT, "include"), os.path.join(HERE, "variant.cc"), "-o", so],
                   check=True)
    a = rng.standard_normal((16, 4096)).astype(np.float32)
    b = rng.standard_normal((4096, 4096)).astype(np.float32)
    c = np.full((16, 4096), np.nan, np.float32)
    P = lambda x: ctypes.c_void_p(x.ctypes.data)  # noqa: E731
    ctypes.CDLL(so).run(P(a), P(b), P(c))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
