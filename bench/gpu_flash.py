"""Flash-attention forward, B8 H16 S4096 D128 fp16, causal and not, against torch SDPA with the flash
(FA2) and cuDNN backends. Our kernel takes [B, S, H, D] tensors (TileLang's example layout); torch
gets [B, H, S, D]. Goal: >= 0.8x torch's FA2 backend."""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_common import TorchKernel, bench, record, rel_err

import cuda_kernels as K

CONFIGS = [
    # block_M, block_N, threads, stages
    (128, 64, 256, 2),
    (64, 64, 128, 2),
    (128, 128, 256, 2),
    (128, 64, 128, 2),
]


def main(B=8, H=16, S=4096, D=128):
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))
    for causal in (False, True):
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        base = {}
        for name, backend in [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
            try:
                with sdpa_kernel(backend):
                    fn = lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)  # noqa
                    ref = fn()
                    base[name] = bench(fn)
                    base[name + "_ref"] = ref
            except Exception as e:  # noqa: BLE001
                print(f"sdpa {name} unavailable: {e}", flush=True)
        ref = base.get("flash_ref", base.get("cudnn_ref"))
        if ref is None:
            with sdpa_kernel(SDPBackend.MATH):
                ref = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
        best = None
        for bm, bn, th, st in CONFIGS:
            tag = f"{bm}x{bn}/t{th}/s{st}"
            try:
                f = K.flashattn(B, H, S, D, causal, block_M=bm, block_N=bn, num_stages=st, threads=th)
                kern = TorchKernel(f)
                o = torch.empty_like(q)
                kern(q, k, v, o)
                torch.cuda.synchronize()
                err = rel_err(o.transpose(1, 2), ref)
                ms = bench(lambda: kern(q, k, v, o))
            except Exception as e:  # noqa: BLE001
                print(f"flash causal={causal} {tag}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                continue
            print(f"flash causal={causal} {tag}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOPS, rel err {err:.2e}, "
                  f"regs {kern.registers}", flush=True)
            if err < 2e-2 and (best is None or ms < best[0]):
                best = (ms, tag, err)
        rec = dict(bench="flash_fwd", causal=causal, shape=f"B{B} H{H} S{S} D{D}", ok=best is not None)
        for name in ("flash", "cudnn"):
            if name in base:
                rec[name + "_ms"] = base[name]
                rec[name + "_tflops"] = flops / base[name] / 1e9
        if best:
            rec.update(config=best[1], ms=best[0], tflops=flops / best[0] / 1e9, rel_err=best[2])
            if "flash" in base:
                rec["ratio_vs_fa2"] = base["flash"] / best[0]
            if "cudnn" in base:
                rec["ratio_vs_cudnn"] = base["cudnn"] / best[0]
        record(**rec)


if __name__ == "__main__":
    main()
