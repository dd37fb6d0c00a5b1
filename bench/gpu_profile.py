"""One kernel launched a few times for Nsight Compute (scripts/gpu_check.sh runs it under ncu and
keeps the report): the main GEMM and flash-attention configurations of the benchmarks.

    ncu --profile-from-start off --launch-skip 1 --launch-count 1 python3 bench/gpu_profile.py gemm|gemm_cluster|gemm_mma|gemm_cublas|flash|flash_full|flash_cudnn|mla|mla_flashmla
    (flash_persistent / flash_full_persistent: the flash kernels with TL_ENABLE_PERSISTENT_FLASH)
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
        if which == "gemm_cublas":  # the peer, torch.matmul on the same tensors
            def k(*args):
                torch.matmul(args[0], args[1], out=args[2])
            k.registers = "-"
        elif which == "gemm_cluster":
            k = TorchKernel(K.matmul(n, n, n, 128, 256, 64, num_stages=4, threads=256, swizzle_panel=8, cluster=2))
        elif which == "gemm_mma":
            k = TorchKernel(K.matmul(n, n, n, 128, 128, 64, num_stages=3, threads=128, swizzle_panel=8),
                            {"tl.disable_wgmma": True})
        else:
            k = TorchKernel(K.matmul(n, n, n, 128, 256, 64, num_stages=4, threads=256, swizzle_panel=16))
        args = (a, b, c)
    elif which == "mla":
        import importlib.util
        import os
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "mla_decode",
                            "example_mla_decode.py")
        spec = importlib.util.spec_from_file_location("example_mla_decode", path)
        ex = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ex)
        B, H, S, D, P = 132, 128, 8192, 512, 64
        q, q_pe = (torch.randn(B, H, d, device="cuda", dtype=torch.float16) for d in (D, P))
        kv, k_pe = (torch.randn(B, S, d, device="cuda", dtype=torch.float16) for d in (D, P))
        o = torch.empty(B, H, D, device="cuda", dtype=torch.float16)
        k = TorchKernel(ex.mla_decode(B, H, S, D, P))
        args = (q, q_pe, kv, k_pe, o)
    elif which == "mla_flashmla":  # the peer: FlashMLA's dense decode (bench/peers/flashmla.py, TL_FLASHMLA_SRC)
        import os
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
        import flashmla
        fm = flashmla.load(os.environ["TL_FLASHMLA_SRC"], os.environ.get("TL_FLASHMLA_CUTLASS"),
                           os.environ.get("TL_FLASHMLA_BUILD"))
        B, H, S, D, P = 132, 128, 8192, 512, 64
        qf = torch.randn(B, 1, H, D + P, device="cuda", dtype=torch.float16)
        kc = torch.randn(B * S // 64, 64, 1, D + P, device="cuda", dtype=torch.float16)
        tab = torch.arange(B * S // 64, device="cuda", dtype=torch.int32).reshape(B, S // 64)
        lens = torch.full((B,), S, device="cuda", dtype=torch.int32)

        def k(*a):
            fm.decode(*a, (D + P) ** -0.5)
        k.registers = "-"
        args = (qf, kc, tab, lens)
    elif which == "flash_cudnn":  # the peer: torch SDPA on cuDNN, non-causal
        from torch.nn.attention import SDPBackend, sdpa_kernel
        B, H, S, D = 8, 16, 4096, 128
        q, kk, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))

        def k(*a):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                torch.nn.functional.scaled_dot_product_attention(*a)
        k.registers = "-"
        args = (q, kk, v)
    else:  # flash (causal) / flash_full (non-causal); *_persistent: TL_ENABLE_PERSISTENT_FLASH
        B, H, S, D = 8, 16, 4096, 128
        q, kk, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        cfg = {"tl.enable_persistent_flash": True} if which.endswith("_persistent") else {}
        k = TorchKernel(K.flashattn(B, H, S, D, not which.startswith("flash_full"), block_M=128, block_N=128,
                                    num_stages=2, threads=256), cfg)
        args = (q, kk, v, o)
    k(*args)
    torch.cuda.synchronize()
    # With `ncu --profile-from-start off`, only the calls after this point are profiled (not the
    # random inputs' kernels).
    torch.cuda.profiler.start()
    for _ in range(3):
        k(*args)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"profiled {which}: registers {k.registers}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gemm")
