"""fp32 decode GEMM variants of include/tl/cpu/gemm.h against the peers, one process, thread CPU time
(twenty-first session): variant.cc (the bench kernel's 16 x 256 blocks of C, k fused) built once per
variant with its -D knobs, the kernel bench/cpu_gemm.py compiles, numpy (OpenBLAS) and torch.matmul
(MKL), one thread each, R interleaved rounds (default 7) of 10 calls. Each variant is checked against a
float64 product first.

  taskset -c 1 python bench/cpu_decode_variants/run.py [name=FLAGS ...]
      e.g. base= kc128=-DTL_CPU_GEMM_F32_KC=128      (PYTHONPATH: python/ and bench/; M: DM=16 default)
  NO_OURS=1 leaves out the compiled kernel (no tilelang build needed: variants and peers only).
"""
import ctypes
import os
import shlex
import subprocess
import sys
import tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402  (first: re-executes without peer-slowing variables before numpy loads)

import numpy as np  # noqa: E402

OURS = os.environ.get("NO_OURS") != "1"  # NO_OURS=1: without the compiled kernel (no tilelang build needed)
if OURS:
    import tilelang  # noqa: E402
    from cpu_gemm import matmul  # noqa: E402

M = int(os.environ.get("DM", 16))
FLAGS = ["-std=c++17", "-O2", "-march=native", "-ftree-vectorize", "-fvect-cost-model=dynamic", "-fno-math-errno",
         "-fno-trapping-math", "-ffp-contract=fast", "-fPIC", "-shared", "-fvisibility=hidden", "-Wno-psabi",
         f"-DDM={M}", "-I" + os.path.join(ROOT, "include")]
variants = [a.split("=", 1) for a in sys.argv[1:]] or [["base", ""]]
tmp = tempfile.mkdtemp()
procs = []
for name, extra in variants:
    so = os.path.join(tmp, name + ".so")
    procs.append((name, so, subprocess.Popen(["g++", *FLAGS, *shlex.split(extra), os.path.join(HERE, "variant.cc"),
                                              "-o", so])))
rng = np.random.default_rng(0)
a = rng.standard_normal((M, 4096), dtype=np.float32)
b = rng.standard_normal((4096, 4096), dtype=np.float32)
ref = a.astype(np.float64) @ b.astype(np.float64)
tol = 1e-4 * np.abs(ref).max()
P = lambda x: ctypes.c_void_p(x.ctypes.data)  # noqa: E731
fns = {}
if OURS:
    k = tilelang.compile(matmul(M, 4096, 4096, M, 256, 64, "float32", "float32", "float32"), target="cpu",
                         pass_configs={"tl.cpu_num_threads": 1})
    c = np.empty((M, 4096), np.float32)
    k(a, b, c)
    assert np.abs(c - ref).max() < tol
    fns["ours"] = lambda: k(a, b, c)
for name, so, p in procs:
    if p.wait() != 0:
        sys.exit(f"{name}: build failed")
    f = ctypes.CDLL(so).run
    o = np.empty((M, 4096), np.float32)
    f(P(a), P(b), P(o))
    err = np.abs(o - ref).max()
    assert err < tol, (name, err)
    fns[name] = (lambda f=f, o=o: f(P(a), P(b), P(o)))
import threadpoolctl  # noqa: E402
threadpoolctl.threadpool_limits(1)
import torch  # noqa: E402
torch.set_num_threads(1)
cn = np.empty((M, 4096), np.float32)
ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(M, 4096)
fns["numpy"] = lambda: np.matmul(a, b, out=cn)
fns["torch"] = lambda: torch.matmul(ta, tb, out=tc)
ms = common.interleaved(fns, rounds=int(os.environ.get("R", 7)), warmup=3, rep=10, timer="thread_cpu")
print(f"fp32 {M}x4096x4096, {common.cpu_model()}, OpenBLAS {common.openblas_peer().get('architecture')}")
first = next(iter(fns))
for n in fns:
    print(f"{n:12s} {2 * M * 4096 * 4096 / ms[n] / 1e6:7.2f} GFLOP/s  vs numpy {ms.ratio('numpy', n):.3f}"
          f"  vs {first} {ms.ratio(first, n):.3f}")
