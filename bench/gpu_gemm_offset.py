"""Does the address of A within a 2 MiB page change GEMM time? (issue 20: our plain GEMM reading A
from the symmetric heap, where tensors start 64 KiB into a cuMemAlloc region, timed 3-4% slower
than on torch's allocation, docs/DISTRIBUTED.md.) One GPU: A is a view at byte offset `off` into a
larger torch buffer; our plain GEMM (the all-gather GEMM's tile shape) and cuBLAS are timed with A at
each offset, in interleaved rounds (order rotated every round), back to back as the distributed
bench times them (mean of `--iters` calls, no L2 flush).

    python bench/gpu_gemm_offset.py [--size 8192] [--rounds 5] [--offsets-kib 0 64 256 1024 2048]
"""
import argparse
import json
import os
import statistics
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python", "cuda"))

import tilelang  # noqa: E402
import cuda_kernels as K  # noqa: E402


def _mean_ms(fn, iters, warmup=3):
    for _ in range(warmup):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / iters


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--offsets-kib", type=int, nargs="+", default=[0, 64, 256, 1024, 2048])
    a = p.parse_args()
    n = a.size
    torch.manual_seed(0)
    elems = n * n
    pad = max(a.offsets_kib) * 1024 // 2 + 1024 * 1024
    raw = torch.empty(elems + pad, dtype=torch.float16, device="cuda")
    src = torch.randn(n, n, dtype=torch.float16, device="cuda")
    B = torch.randn(n, n, dtype=torch.float16, device="cuda")
    C = torch.empty(n, n, dtype=torch.float16, device="cuda")
    ref = torch.matmul(src, B)
    g = tilelang.compile(K.matmul(n, n, n, 128, 256, 64, num_stages=4, threads=256, swizzle_panel=8), target="cuda")
    views = {}
    for kib in a.offsets_kib:
        v = raw[kib * 512:kib * 512 + elems].view(n, n)
        v.copy_(src)
        g(v, B, C)
        torch.cuda.synchronize()
        err = (C.float() - ref.float()).abs().max().item()
        views[kib] = (v, err)
    names = [(f"ours@{k}K", (lambda v=views[k][0]: g(v, B, C))) for k in a.offsets_kib]
    names += [(f"cublas@{k}K", (lambda v=views[k][0]: torch.matmul(v, B, out=C))) for k in a.offsets_kib]
    times = {nm: [] for nm, _ in names}
    for r in range(a.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for nm, fn in order:
            times[nm].append(_mean_ms(fn, a.iters))
    out = {"device": torch.cuda.get_device_name(0), "size": n, "base_ptr_mod_2MiB": raw.data_ptr() % (2 << 20),
           "median_ms": {nm: round(statistics.median(t), 4) for nm, t in times.items()},
           "max_abs_diff": {k: e for k, (_, e) in views.items()}}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
