"""Probe of the warp-specialized GEMM's per-tile costs (issue 16): the generated CUDA source of one
configuration, edited by hand into variants, each compiled with NVRTC and timed next to cuBLAS in one
process. Not a benchmark of a shipped code path: it tells which code-generation change is worth
making before making it.

    python3 bench/gpu_hopper_variants.py [sizes...]

Variants (applied to the source of K.matmul(n, n, n, 128, 256, 64, 4 stages, 256 threads, panel 8)):
  base    the source as generated (the epilogue's lanes exchange pairs for 16-byte stores)
  noxchg  generated with TL_DISABLE_STORE_EXCHANGE: each lane stores its own pairs (4 bytes)
  nofence no fence.proxy.async before each wgmma (operands come from TMA only: async proxy)
The first probes (2026-11-26, H100) had the exchange and a per-warp release of the stages ("warp": one
mbarrier arrival per warp instead of per thread) as hand edits; both are the code generator's now.
"""
import re
import sys

import torch

from gpu_common import bench, cuda, device_arch, record, rel_err

import cuda_kernels as K




def variant(src, name, n):
    if name == "base":
        return src
    out = src
    if name == "nofence":
        out = "#define TL_WGMMA_NO_PROXY_FENCE\n" + out
    return out


class SourceKernel:
    def __init__(self, built, src):
        r = cuda.compile(src, "kernel.cu", built["arch"], False, False, [])
        self.kernel = cuda.Kernel(r["cubin"], built["meta"], built["num_params"], built["num_dyn"])
        self.registers = r["usage"][0]["registers"] if r["usage"] else 0

    def __call__(self, a, b, c):
        self.kernel.launch([("ptr", a.data_ptr()), ("ptr", b.data_ptr()), ("ptr", c.data_ptr())],
                           torch.cuda.current_stream().cuda_stream, torch.cuda.current_device())


def main(sizes):
    for dtype_name, dtype in [("float16", torch.float16), ("bfloat16", torch.bfloat16)]:
        for n in sizes:
            torch.manual_seed(n)
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            ref = torch.matmul(a.float(), b.float())
            flops = 2.0 * n ** 3
            f = K.matmul(n, n, n, 128, 256, 64, dtype=dtype_name, num_stages=4, threads=256, swizzle_panel=8)
            built = cuda.build_func(f.ir, device_arch(), {}, [])
            plain = cuda.build_func(f.ir, device_arch(), {"tl.disable_store_exchange": True}, [])
            rec = dict(bench="hopper_gemm_variants", dtype=dtype_name, size=n)
            for rnd in range(2):  # two interleaved rounds: the order of variants does not pick the winner
                t_cublas = bench(lambda: torch.matmul(a, b))
                rec.setdefault("cublas_ms", []).append(t_cublas)
                print(f"{dtype_name} {n} round {rnd} cuBLAS {flops / t_cublas / 1e9:.0f} TFLOPS", flush=True)
                for name in ("base", "noxchg", "nofence"):
                    try:
                        src = plain["source"] if name == "noxchg" else variant(built["source"], name, n)
                        k = SourceKernel(built, src)
                        c = torch.full((n, n), float("nan"), device="cuda", dtype=dtype)
                        k(a, b, c)
                        torch.cuda.synchronize()
                        err = rel_err(c, ref)
                        ms = bench(lambda: k(a, b, c))
                    except Exception as e:  # noqa: BLE001 - report and go on
                        print(f"  {name}: {type(e).__name__}: {str(e)[:400]}", flush=True)
                        continue
                    ok = err < 1e-2
                    rec.setdefault(name, []).append(dict(ms=ms, tflops=flops / ms / 1e9, ratio=t_cublas / ms,
                                                         rel_err=err, ok=ok, regs=k.registers))
                    print(f"  {name}: {ms:.3f} ms {flops / ms / 1e9:.0f} TFLOPS {t_cublas / ms:.3f}x cuBLAS "
                          f"err {err:.1e}{'' if ok else ' WRONG'} regs {k.registers}", flush=True)
            record(**rec)


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [4096, 8192])
