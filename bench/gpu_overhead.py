"""Host overhead per call of a tiny cuda kernel, against torch.add on the same tiny tensors.

The figure that counts is the user's call: `kernel(a, b, c)` on a kernel from `tilelang.compile`, with
torch tensors (argument checks, DLPack / tensor attribute reads, torch's current stream, the driver
launch). Also shown: the same with an `out_idx` output allocated per call, the bare driver launch
with argument slots prepared once (the floor of the runtime), and the cost of the torch pieces the
call path could use (`__dlpack__`, the current-stream query) so regressions can be located. Host
time per call is measured with the launches queued (no synchronization per call) in rounds of 500
that the driver's launch queue absorbs. Goal: <= 5 us."""
import time

import torch

from gpu_common import TorchKernel, record

import cuda_kernels as K
import tilelang


def per_call_us(fn, n=500, rounds=21):
    """Median over rounds of the mean host time of n back-to-back calls, in microseconds. n stays well
    below the driver's launch-queue depth and every round starts from an idle device, so the figure is
    host time, not the device's rate of retiring tiny kernels (4000 queued launches measured that)."""
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t) / n * 1e6)
        torch.cuda.synchronize()
    return sorted(samples)[len(samples) // 2]


def main():
    a = torch.randn(32, 128, device="cuda", dtype=torch.float16)
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    func = K.vector_add(32, 128, block_M=32, block_N=128)

    user = tilelang.compile(func, target="cuda")
    user(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b), "tilelang kernel result differs from torch"
    user_out = tilelang.compile(func, out_idx=[2], target="cuda")
    assert torch.equal(user_out(a, b), a + b)

    bare = TorchKernel(func)
    launch = bare.prepared(a, b, c)
    dev = torch.cuda.current_device()
    get_raw = torch._C._cuda_getCurrentRawStream

    slots = bare.slots((a, b, c))
    stream = torch.cuda.current_stream().cuda_stream
    bare.kernel.launch_loop(slots, stream, dev, 200)
    torch.cuda.synchronize()
    floor = []
    for _ in range(21):
        floor.append(bare.kernel.launch_loop(slots, stream, dev, 500))
        torch.cuda.synchronize()
    floor = sorted(floor)[10]
    torch.cuda.synchronize()

    figures = {
        "us_launch_in_cpp": floor,
        "us_per_call": per_call_us(lambda: user(a, b, c)),
        "us_per_call_out_idx": per_call_us(lambda: user_out(a, b)),
        "us_bare_launch": per_call_us(launch),
        "torch_add_us": per_call_us(lambda: torch.add(a, b, out=c)),
        "torch_dlpack_us": per_call_us(lambda: a.__dlpack__()),
        "torch_stream_query_us": per_call_us(lambda: get_raw(dev)),
    }
    for k, v in figures.items():
        print(f"{k:24s} {v:7.2f} us", flush=True)
    record(bench="host_overhead", ok=figures["us_per_call"] <= 5.0, **figures)


if __name__ == "__main__":
    main()
