"""bench/cpu_gemm.py's two 2048^3 kernels of one dtype — the cpu configuration's blocks and TileLang's
example blocks (128 x 128 x 32, run as 512 x 512 by coarsen_gemm_blocks) — timed interleaved in one process
on the same operands (thread CPU time, one thread, no peer): are their rates equal? (Twentieth session,
docs/PERFORMANCE.md: the bench's example rows read below the configuration's on the AMX Xeon; interleaved,
they were equal.) Each kernel's result is checked against a float64 product first.

  taskset -c 2 python bench/cpu_gemm_pair.py      (PYTHONPATH: python/ and bench/)
  env: R rounds (9); DTS=int8,bfloat16,float32; ALIGN=1 (operands 2 MiB-aligned, as the block-loop
  harness allocates them; default: numpy's, 16 bytes past a page); EXFIRST=1 (compile the example first)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (first: re-executes without peer-slowing variables)

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
from cpu_gemm import CPU_CONFIG, EXAMPLE_BLOCKS, SHAPES, check, matmul  # noqa: E402

N = 2048
KINDS = {"int8": ("int32", None), "bfloat16": ("float32", "bfloat16"), "float32": ("float32", None)}
CONFIG = dict(CPU_CONFIG, float32=next(s[4] for s in SHAPES if s[0] == "fp32 2048^3"))  # the bench's fp32 row


def aligned(x):
    """x itself, or (ALIGN=1) a copy in a 2 MiB-aligned buffer."""
    if not os.environ.get("ALIGN"):
        return x
    buf = np.empty(x.nbytes + (1 << 21), np.uint8)
    off = (-buf.ctypes.data) % (1 << 21)
    y = buf[off:off + x.nbytes].view(x.dtype).reshape(x.shape)
    y[...] = x
    return y


def operands(dtype, rng):
    if dtype == "int8":
        a, b = (rng.integers(-128, 128, (N, N)).astype(np.int8) for _ in range(2))
        return a, b, np.empty((N, N), np.int32)
    import ml_dtypes
    t = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
    a, b = (rng.standard_normal((N, N)).astype(t) for _ in range(2))
    return a, b, np.empty((N, N), t)


def pair(dtype, rounds, rng):
    acc, out = KINDS[dtype]
    blocks = {"cfg": CONFIG[dtype], "example": EXAMPLE_BLOCKS}
    order = list(blocks)[::-1] if os.environ.get("EXFIRST") else list(blocks)
    kernels = {n: tilelang.compile(matmul(N, N, N, *blocks[n], dtype, acc, out), target="cpu",
                                   pass_configs={"tl.cpu_num_threads": 1}) for n in order}
    a, b, c = (aligned(x) for x in operands(dtype, rng))
    for n, k in kernels.items():
        k(a, b, c)
        rows = rng.integers(0, N, 16)
        check(c[rows].astype(np.float64), a[rows], b, f"{dtype} {n}", 1e-12 if dtype == "int8" else 2e-2)
    ms = common.interleaved({n: (lambda k=k: k(a, b, c)) for n, k in kernels.items()}, rounds=rounds, warmup=1,
                            rep=2, timer="thread_cpu")
    ratios = sorted(t["cfg"] / t["example"] for t in
                    ({n: v[i] for n, v in ms.samples.items()} for i in range(rounds)))
    print(f"{dtype}: operands at {a.ctypes.data % 4096} bytes past a page; cfg {2 * N**3 / ms['cfg'] / 1e6:.0f}, "
          f"example {2 * N**3 / ms['example'] / 1e6:.0f} G(FL)OP/s; example / cfg speed: median "
          f"{ms.ratio('cfg', 'example'):.3f} (min {ratios[0]:.3f}, max {ratios[-1]:.3f})", flush=True)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for dtype in os.environ.get("DTS", "int8,bfloat16,float32").split(","):
        pair(dtype, int(os.environ.get("R", 9)), rng)
