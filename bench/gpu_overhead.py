"""Host overhead per launch: a tiny tilelang kernel launched back to back (argument slots prepared
once, as the runtime's launcher does), against torch.add on tiny tensors. Host time per call is
measured with the launches queued (no synchronization per call). Goal: <= 5 us per call."""
import time

import torch

from gpu_common import TorchKernel, record

import cuda_kernels as K


def per_call_us(fn, n=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return host


def main():
    a = torch.randn(32, 128, device="cuda", dtype=torch.float16)
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    k = TorchKernel(K.vector_add(32, 128, block_M=32, block_N=128))
    launch = k.prepared(a, b, c)
    ours_prepared = per_call_us(launch)
    ours_call = per_call_us(lambda: k(a, b, c))
    torch_add = per_call_us(lambda: torch.add(a, b, out=c))
    print(f"tilelang launch (prepared slots): {ours_prepared:.2f} us/call; with argument conversion: "
          f"{ours_call:.2f} us/call; torch.add: {torch_add:.2f} us/call", flush=True)
    record(bench="host_overhead", us_per_call=ours_prepared, us_per_call_with_args=ours_call,
           torch_add_us=torch_add, ok=ours_prepared <= 5.0)


if __name__ == "__main__":
    main()
