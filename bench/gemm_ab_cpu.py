"""One-process A/B of the cpu fp32 GEMM against an earlier tree's header, next to numpy (OpenBLAS)
and torch (MKL): one thread, thread CPU time, interleaved rounds (bench/common.py), every result
checked against numpy in float64 first. (Not named cpu_*: `make bench` runs those without arguments.)

  python bench/gemm_ab_cpu.py --old-include DIR [--rounds 7] [--rep 3] M,N,K ... \
      --variants new512x512x64,old256x256x64

A variant is `newBMxBNxBK` (this tree: its header, the k-loop fusion on) or `oldBMxBNxBK` (the
headers in DIR, e.g. a copy of include/ with `git show <commit>:include/tl/cpu/gemm.h` put in, and
tl.disable_cpu_gemm_k_fusion: the code before the fusion), or `unfused`/`fused` with the blocks of
the shape argument M,N,K,BM,BN,BK. The kernel cache keys on the headers' contents, so both
variants are built and loaded in one process. Ratios are medians of per-round paired ratios
against the first variant (docs/PERFORMANCE.md, cpu, fifth pass)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (first: re-executes without peer-slowing variables before numpy loads)

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
from cpu_gemm import matmul  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rep", type=int, default=3)
    ap.add_argument("--old-include", default=None, help="include/ of the earlier tree (for old* variants)")
    ap.add_argument("--variants", default="fused,unfused")
    ap.add_argument("shapes", nargs="+", help="M,N,K or M,N,K,BM,BN,BK")
    args = ap.parse_args()
    import threadpoolctl
    import torch
    _limits = threadpoolctl.threadpool_limits(limits=1, user_api="blas")  # noqa: F841 (kept alive)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    for sh in args.shapes:
        dims = list(map(int, sh.split(",")))
        M, N, K = dims[:3]
        blocks = tuple(dims[3:6]) if len(dims) == 6 else None
        a = rng.standard_normal((M, K), dtype=np.float32)
        b = rng.standard_normal((K, N), dtype=np.float32)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        fns = {}
        for v in args.variants.split(","):
            cfg = {"tl.cpu_num_threads": 1}
            if v in ("fused", "unfused"):
                if blocks is None:
                    raise ValueError(f"variant {v} needs blocks in the shape (M,N,K,BM,BN,BK)")
                bm, bn, bk = blocks
            else:
                bm, bn, bk = map(int, v[3:].split("x"))
            if v == "unfused" or v.startswith("old"):
                cfg["tl.disable_cpu_gemm_k_fusion"] = True
            if v.startswith("old"):
                if not args.old_include:
                    raise ValueError("old* variants need --old-include")
                os.environ["TILELANG_INCLUDE_DIR"] = args.old_include
            try:
                kernel = tilelang.compile(matmul(M, N, K, bm, bn, bk), target="cpu", pass_configs=cfg)
            finally:
                os.environ.pop("TILELANG_INCLUDE_DIR", None)
            c = np.empty((M, N), np.float32)
            kernel(a, b, c)
            err = np.abs(c - ref).max() / np.abs(ref).max()
            if not err < 1e-5:
                raise AssertionError(f"{v}: relative error {err:.2e}")
            fns[v] = (lambda kernel=kernel, c=c: kernel(a, b, c))
        cn = np.empty((M, N), np.float32)
        fns["numpy"] = lambda: np.matmul(a, b, out=cn)
        ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(cn.copy())
        fns["torch"] = lambda: torch.matmul(ta, tb, out=tc)
        l0 = os.getloadavg()[0]
        ms = common.interleaved(fns, rounds=args.rounds, warmup=2, rep=args.rep, timer="thread_cpu")
        flops = 2.0 * M * N * K
        first = next(iter(fns))
        print(f"{sh}: load {l0:.1f}->{os.getloadavg()[0]:.1f}  " +
              "  ".join(f"{n} {common.gflops(flops, ms[n]):.1f}" for n in fns) + " GFLOP/s | " +
              " ".join(f"{first}/{p} {ms.ratio(p, first):.3f}" for p in fns if p != first), flush=True)


if __name__ == "__main__":
    main()
