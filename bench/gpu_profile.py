"""One kernel launched a few times for Nsight Compute (scripts/gpu_check.sh runs it under ncu and
keeps the report): the main GEMM and flash-attention configurations of the benchmarks.

    ncu --launch-skip 2 --launch-count 1 python3 bench/gpu_profile.py gemm|gemm_mma|flash
"""
import sys

import torch

from gpu_common import TorchKernel

import cuda_kernels as K


def main(which):
    torch.manual_seed(0)
    if which.startswith("gemm"):
        n = 4096
        a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
        c = torch.empty(n, n, device="cuda", dtype=torch.float16)
        if which == "gemm_mma":
            k = TorchKernel(K.matmul(n, n, n, 128, 128, 64, num_stages=3, threads=128, swizzle_panel=8),
                            {"tl.disable_wgmma": True})
        else:
            k = TorchKernel(K.matmul(n, n, n, 128, 256, 64, num_stages=4, threads=256, swizzle_panel=8))
        args = (a, b, c)
    else:
        B, H, S, D = 8, 16, 4096, 128
        q, kk, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        k = TorchKernel(K.flashattn(B, H, S, D, True, block_M=128, block_N=128, num_stages=2, threads=256))
        args = (q, kk, v, o)
    for _ in range(3):
        k(*args)
    torch.cuda.synchronize()
    print(f"profiled {which}: registers {k.registers}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gemm")
