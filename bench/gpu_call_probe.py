"""Where the host time of a cuda kernel call from Python goes: the cost of each torch tensor
attribute the call path reads, torch's DLPack entries, and the call itself (diagnostics for
bench/gpu_overhead.py)."""
import torch

import cuda_kernels as K
import tilelang
from gpu_overhead import per_call_us as us


def main():
    a = torch.randn(32, 128, device="cuda", dtype=torch.float16)
    b, c = torch.randn_like(a), torch.empty_like(a)
    print("torch", torch.__version__)
    print("DLPack C exchange API (the call path's fast route):", hasattr(torch.Tensor, "__dlpack_c_exchange_api__"))
    probes = {
        "a.data_ptr()": lambda: a.data_ptr(),
        "a.shape": lambda: a.shape,
        "a.stride()": lambda: a.stride(),
        "a.dtype": lambda: a.dtype,
        "a.is_cuda": lambda: a.is_cuda,
        "a.get_device()": lambda: a.get_device(),
        "a.device": lambda: a.device,
        "empty loop": lambda: None,
    }
    for k, f in probes.items():
        print(f"{k:20s} {us(f):6.3f} us")
    k = tilelang.compile(K.vector_add(32, 128, block_M=32, block_N=128), target="cuda")
    print(f"{'k(a, b, c)':20s} {us(lambda: k(a, b, c)):6.3f} us")
    print(f"{'torch.add out=':20s} {us(lambda: torch.add(a, b, out=c)):6.3f} us")


if __name__ == "__main__":
    main()
