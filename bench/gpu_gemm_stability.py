"""Why our GEMM fp16 8192^3 time is bimodal across processes (docs/PERFORMANCE.md, "Against TileLang
0.1.15 on the same GPU"): in one process, our kernel and cuBLAS alternate on the same tensors, then on
tensors placed at other device addresses (a spacer allocation of a varying size in front), with and
without the L2 flush. A placement effect shows as time changing with the spacer for ours only; a
clock effect as both drifting together.

    python3 bench/gpu_gemm_stability.py [n]
"""
import sys

import torch

from gpu_common import TorchKernel, bench, record

import cuda_kernels as K

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
CONFIGS = {"ws s4 sw8": (dict(num_stages=4, swizzle_panel=8), {}),
           "ws s4 sw16": (dict(num_stages=4, swizzle_panel=16), {}),
           "wsnp s4 sw8": (dict(num_stages=4, swizzle_panel=8), {"tl.disable_persistent": True})}
kernels = {name: TorchKernel(K.matmul(n, n, n, 128, 256, 64, dtype="float16", threads=256, **kw), cfg)
           for name, (kw, cfg) in CONFIGS.items()}
for spacer_mb in (0, 1, 3, 16, 37):
    spacer = torch.empty(spacer_mb * 2**20 + 256, dtype=torch.uint8, device="cuda")
    torch.manual_seed(spacer_mb)
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    for flush in (True, False):
        row = dict(bench="gemm_stability", n=n, spacer_mb=spacer_mb, flush=flush,
                   a_addr_mod_2m=a.data_ptr() % 2**21)
        for rep in range(2):
            row[f"cublas_{rep}"] = bench(lambda: torch.matmul(a, b, out=c), flush=flush)
            for name, k in kernels.items():
                row[f"{name}_{rep}"] = bench(lambda: k(a, b, c), flush=flush)
        record(**row)
    del a, b, c, spacer
    torch.cuda.empty_cache()
