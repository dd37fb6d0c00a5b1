"""Decode GEMV variants against ours and the peers, one process, thread CPU time (eighteenth session):
the kernel bench/cpu_gemm.py compiles for `fp32 decode 1x4096x4096`, the hand-written variants of
variants.cc (g++ -O2 -march=native), numpy (OpenBLAS) and torch.matmul (MKL), one thread each, R
interleaved rounds (default 7) of 10 calls. Each variant is checked against a float64 product first.

  taskset -c 2 python bench/cpu_gemv_variants/run.py      (PYTHONPATH: python/ and bench/)
"""
import ctypes
import os
import subprocess
import sys
import tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
SO = os.path.join(tempfile.mkdtemp(), "gemv_variants.so")
import common  # noqa: E402  (first: re-executes without peer-slowing variables before numpy loads)

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
from cpu_gemm import matmul  # noqa: E402
subprocess.check_call(["g++", "-O2", "-march=native", "-fPIC", "-shared", os.path.join(HERE, "variants.cc"), "-o", SO])
h = ctypes.CDLL(SO)
names = ["r8_2048", "r8_4096", "r8_2048_pf256t0", "r8_2048_pf512t1", "r8_4096_pf512t1", "r8_4096_pf1024t1",
         "r4_4096_pf1024t1", "r16_4096_pf256t0", "r4_4096", "r2_4096_pf512t0"]
rng = np.random.default_rng(0)
a = rng.standard_normal((1, 4096), dtype=np.float32); b = rng.standard_normal((4096, 4096), dtype=np.float32)
ref = a.astype(np.float64) @ b.astype(np.float64)
k = tilelang.compile(matmul(1, 4096, 4096, 1, 2048, 256, "float32", "float32", "float32"), target="cpu",
                     pass_configs={"tl.cpu_num_threads": 1})
c = np.empty((1, 4096), np.float32)
k(a, b, c); assert np.abs(c - ref).max() < 1e-3
P = lambda x: ctypes.c_void_p(x.ctypes.data)
fns = {"ours": lambda: k(a, b, c)}
outs = {}
for n in names:
    o = np.empty((1, 4096), np.float32); outs[n] = o
    f = getattr(h, n)
    f(P(a), P(b), P(o)); assert np.abs(o - ref).max() < 1e-3, n
    fns[n] = (lambda f=f, o=o: f(P(a), P(b), P(o)))
import threadpoolctl; threadpoolctl.threadpool_limits(1)
import torch; torch.set_num_threads(1)
cn = np.empty((1, 4096), np.float32)
ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(1, 4096)
fns["numpy"] = lambda: np.matmul(a, b, out=cn)
fns["torch"] = lambda: torch.matmul(ta, tb, out=tc)
ms = common.interleaved(fns, rounds=int(os.environ.get("R", 7)), warmup=3, rep=10, timer="thread_cpu")
for n in fns:
    print(f"{n:20s} {2*4096*4096/ms[n]/1e6:6.2f} GFLOP/s  vs torch {ms.ratio('torch', n):.3f}  vs ours {ms.ratio('ours', n):.3f}")
