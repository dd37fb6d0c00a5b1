"""GEMM tile-configuration sweep against cuBLAS in interleaved rounds (issue 16, docs/PERFORMANCE.md).

Every configuration of the README GEMM source (tests/python/cuda/cuda_kernels.matmul) is compiled
once and checked against an fp32 torch product; then each round times cuBLAS (torch.matmul) and every
configuration one after another on the same tensors (L2 flushed before each call), so that clock
and power-cap drift hits all of them alike. Reported per configuration: the median over rounds of
the per-round ratio t_cuBLAS / t_ours, and its range.

    python3 bench/gpu_gemm_sweep.py [--sizes 4096 8192] [--dtypes float16 bfloat16] [--rounds 5]

--ab-tma-store times every configuration twice in the same rounds: as compiled by default (on
sm_90a the TMA-store epilogue, src/target/cuda/ws_tma_store.h; tag "+tmastore") and with
TL_DISABLE_TMA_STORE (the register store, "-tmastore"); a variant whose source does not have the
form its tag claims is reported and left out. With --pairs also "+tmastore/pairs": the TMA store with
the staging written by converted element pairs instead of stmatrix (TL_DISABLE_STMATRIX).
"""
import argparse
import statistics

import torch

from gpu_common import TorchKernel, bench, record, rel_err

import cuda_kernels as K

# mode, block_M, block_N, block_K, threads, stages, swizzle panel, cluster
CONFIGS = [
    ("ws", 128, 128, 64, 128, 4, 16, None),
    ("ws", 128, 256, 64, 256, 4, 8, None),
    ("ws", 128, 256, 64, 256, 4, 16, None),
    ("ws", 128, 256, 64, 256, 3, 8, None),
    ("ws", 128, 256, 64, 256, 5, 8, None),
    ("ws", 128, 256, 64, 256, 4, 4, None),
    ("ws", 128, 256, 64, 256, 4, 32, None),
    ("ws", 256, 128, 64, 256, 4, 8, None),
    ("ws", 256, 128, 64, 256, 4, 16, None),
    ("ws", 128, 256, 32, 256, 8, 8, None),
    ("wsnp", 128, 256, 64, 256, 4, 16, None),
    ("wsnp", 128, 256, 64, 256, 4, 8, None),
    ("ws", 128, 256, 64, 256, 4, 8, 2),
    ("ws", 128, 256, 64, 256, 4, 16, 2),
    ("ws", 256, 128, 64, 256, 4, 8, 2),
]
MODES = {"ws": {}, "wsnp": {"tl.disable_persistent": True}}


def tag(cfg):
    mode, bm, bn, bk, th, st, sw, cl = cfg
    return f"{mode} {bm}x{bn}x{bk}/t{th}/s{st}/sw{sw}" + (f"/cl{cl}" if cl else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096])
    ap.add_argument("--dtypes", nargs="+", default=["float16"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=None, help="configuration indices to run")
    ap.add_argument("--ab-tma-store", action="store_true",
                    help="each configuration with and without the TMA-store epilogue (TL_DISABLE_TMA_STORE)")
    ap.add_argument("--pairs", action="store_true", help="with --ab-tma-store: also the TMA store without stmatrix")
    args = ap.parse_args()
    variants = [("+tmastore", {}), ("-tmastore", {"tl.disable_tma_store": True})] if args.ab_tma_store else [("", {})]
    if args.ab_tma_store and args.pairs:
        variants.append(("+tmastore/pairs", {"tl.disable_stmatrix": True}))
    for dtype_name in args.dtypes:
        dtype = getattr(torch, dtype_name)
        for n in args.sizes:
            torch.manual_seed(n)
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            ref = torch.matmul(a.float(), b.float())
            c = torch.empty(n, n, device="cuda", dtype=dtype)
            flops = 2.0 * n ** 3
            kernels = {}
            for i, cfg in enumerate(CONFIGS):
                if args.only is not None and str(i) not in args.only:
                    continue
                mode, bm, bn, bk, th, st, sw, cl = cfg
                for suffix, extra in variants:
                    name = tag(cfg) + suffix
                    try:
                        k = TorchKernel(K.matmul(n, n, n, bm, bn, bk, dtype=dtype_name, num_stages=st, threads=th,
                                                 swizzle_panel=sw, cluster=cl), dict(MODES[mode], **extra))
                        c.fill_(float("nan"))
                        k(a, b, c)
                        torch.cuda.synchronize()
                        err = rel_err(c, ref)
                    except Exception as e:  # noqa: BLE001 - report and go on
                        print(f"{dtype_name} {n} {name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                        continue
                    if err > 1e-2:
                        print(f"{dtype_name} {n} {name}: WRONG, rel err {err:.1e}", flush=True)
                        continue
                    has_store = "tl::tma_store(" in k.built["source"]
                    if suffix and has_store != suffix.startswith("+tmastore"):
                        print(f"{dtype_name} {n} {name}: the source {'has' if has_store else 'lacks'} the TMA store "
                              f"(see cuda.why_not_warp_specialized / ws_tma_store.h); left out", flush=True)
                        continue
                    kernels[name] = k
            ratios = {t: [] for t in kernels}
            times = {t: [] for t in kernels}
            cublas = []
            for _ in range(args.rounds):
                t_ref = bench(lambda: torch.matmul(a, b, out=c))
                cublas.append(t_ref)
                for t, k in kernels.items():
                    ms = bench(lambda: k(a, b, c))
                    times[t].append(ms)
                    ratios[t].append(t_ref / ms)
            print(f"{dtype_name} {n} cuBLAS median {statistics.median(cublas):.4f} ms "
                  f"({flops / statistics.median(cublas) / 1e9:.0f} TFLOPS)", flush=True)
            for t in sorted(kernels, key=lambda t: -statistics.median(ratios[t])):
                med = statistics.median(ratios[t])
                print(f"{dtype_name} {n} {t}: {statistics.median(times[t]):.4f} ms "
                      f"({flops / statistics.median(times[t]) / 1e9:.0f} TFLOPS), x cuBLAS median {med:.3f} "
                      f"[{min(ratios[t]):.3f}, {max(ratios[t]):.3f}]", flush=True)
                record(bench="gemm_sweep", dtype=dtype_name, size=n, config=t, ratios=ratios[t], ms=times[t],
                       cublas_ms=cublas)


if __name__ == "__main__":
    main()
