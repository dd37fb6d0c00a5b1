"""Flash-attention forward, B8 H16 S4096 D128 (and B8 H32 S4096 D64) fp16, causal and not, against
torch SDPA with the flash (FA2) and cuDNN backends, in one run. The kernel is TileLang's example_mha_fwd structure
(tests/python/cuda/cuda_kernels.py: flashattn, [B, S, H, D] tensors; torch gets [B, H, S, D]); when
examples/flash_attention/example_flash_attention.py exists ([B, H, S, D]), its kernel is timed too.
T.gemm runs on wgmma on sm_90a (default) and on mma.sync (TL_DISABLE_WGMMA). Goal: >= 0.8x FA2."""
import importlib.util
import os

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_common import ROOT, TorchKernel, bench, record, rel_err, sass_loop_stats

import cuda_kernels as K

CONFIGS = [
    # instruction, block_M, block_N, threads, stages (mma.sync first: see bench/gpu_gemm.py)
    ("mma", 128, 64, 128, 2),
    ("mma", 128, 128, 256, 2),
    ("wgmma", 128, 128, 256, 2),
    ("wgmma", 128, 64, 256, 2),
    ("wgmma", 128, 128, 256, 1),
    ("wgmma", 128, 64, 128, 2),
    ("wgmma", 64, 128, 128, 2),
]
EXAMPLE = os.path.join(ROOT, "examples", "flash_attention", "example_flash_attention.py")


def load_example():
    if not os.path.exists(EXAMPLE):
        return None
    spec = importlib.util.spec_from_file_location("example_flash_attention", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(B=8, H=16, S=4096, D=128):
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))
    example = load_example()
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
                print(f"flash causal={causal} torch {name}: {base[name]:.3f} ms, "
                      f"{flops / base[name] / 1e9:.0f} TFLOPS", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"sdpa {name} unavailable: {e}", flush=True)
        ref = base.get("flash_ref", base.get("cudnn_ref"))
        if ref is None:
            with sdpa_kernel(SDPBackend.MATH):
                ref = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
        results = []
        sass_done = set()
        for instr, bm, bn, th, st in CONFIGS:
            tag = f"{instr} {bm}x{bn}/t{th}/s{st}"
            try:
                f = K.flashattn(B, H, S, D, causal, block_M=bm, block_N=bn, num_stages=st, threads=th)
                kern = TorchKernel(f, {"tl.disable_wgmma": True} if instr == "mma" else {})
                o = torch.full_like(q, float("nan"))
                kern(q, k, v, o)
                torch.cuda.synchronize()
                err = rel_err(o.transpose(1, 2), ref)
                ms = bench(lambda: kern(q, k, v, o))
                sass = {}
                if causal and instr not in sass_done:
                    sass = sass_loop_stats(kern.built["cubin"])
                    sass_done.add(instr)
            except Exception as e:  # noqa: BLE001
                print(f"flash causal={causal} {tag}: {type(e).__name__}: {str(e)[:400]}", flush=True)
                continue
            print(f"flash causal={causal} {tag}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOPS, rel err {err:.2e}, "
                  f"regs {kern.registers}" + (f", loop SASS {sass}" if sass else ""), flush=True)
            if err < 2e-2:
                results.append((ms, tag, err, kern.registers))
            else:
                print(f"flash causal={causal} {tag}: WRONG RESULT", flush=True)
        example_ms = None
        if example is not None:  # the examples' kernel, [B, H, S, D], at the best tile of the run
            best_wgmma = min((r for r in results if r[1].startswith("wgmma")), default=None, key=lambda r: r[0])
            bm, bn, th, st = 128, 128, 256, 2
            if best_wgmma:
                shape = best_wgmma[1].split()[1]
                bm, bn = (int(x) for x in shape.split("/")[0].split("x"))
                th, st = int(shape.split("/")[1][1:]), int(shape.split("/")[2][1:])
            try:
                f = example.flashattn(B, H, S, D, causal, block_M=bm, block_N=bn, num_stages=st, threads=th)
                kern = TorchKernel(f)
                o = torch.full_like(qt, float("nan"))
                kern(qt, kt, vt, o)
                torch.cuda.synchronize()
                err = rel_err(o, ref)
                example_ms = bench(lambda: kern(qt, kt, vt, o))
                print(f"flash causal={causal} examples/flash_attention {bm}x{bn}/t{th}/s{st}: {example_ms:.3f} ms, "
                      f"{flops / example_ms / 1e9:.0f} TFLOPS, rel err {err:.2e}", flush=True)
                if err >= 2e-2:
                    example_ms = None
            except Exception as e:  # noqa: BLE001
                print(f"flash causal={causal} examples/flash_attention: {type(e).__name__}: {str(e)[:400]}", flush=True)
        results.sort()
        rec = dict(bench="flash_fwd", causal=causal, shape=f"B{B} H{H} S{S} D{D}", ok=bool(results))
        for name in ("flash", "cudnn"):
            if name in base:
                rec[name + "_ms"] = base[name]
                rec[name + "_tflops"] = flops / base[name] / 1e9
        for fam in ("wgmma", "mma"):
            best = [r for r in results if r[1].startswith(fam)]
            if best:
                rec[fam] = dict(config=best[0][1], ms=best[0][0], tflops=flops / best[0][0] / 1e9,
                                ratio_vs_fa2=base["flash"] / best[0][0] if "flash" in base else None)
        if results:
            ms, tag, err, regs = results[0]
            rec.update(config=tag, ms=ms, tflops=flops / ms / 1e9, rel_err=err)
            if "flash" in base:
                rec["ratio_vs_fa2"] = base["flash"] / ms
            if "cudnn" in base:
                rec["ratio_vs_cudnn"] = base["cudnn"] / ms
        if example_ms:
            rec["example"] = dict(ms=example_ms, tflops=flops / example_ms / 1e9,
                                  ratio_vs_fa2=base["flash"] / example_ms if "flash" in base else None)
        record(**rec)


if __name__ == "__main__":
    main()                        # the shape
    main(B=8, H=32, S=4096, D=64)  # PERF_TARGETS.md's head-dim-64 row
