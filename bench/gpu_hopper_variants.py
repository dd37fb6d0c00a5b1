"""Probe of the warp-specialized GEMM's per-tile costs (issue 16): the generated CUDA source of one
configuration, edited by hand into variants, each compiled with NVRTC and timed next to cuBLAS in one
process. Not a benchmark of a shipped code path: it tells which code-generation change is worth
making before making it.

    python3 bench/gpu_hopper_variants.py [sizes...]
    python3 bench/gpu_hopper_variants.py flash [--short | --persistent | --tma-store]  (attention variants: see flash())
    python3 bench/gpu_hopper_variants.py mla  (MLA decode with FA3's overlap on and off: see mla())

Variants (applied to the source of K.matmul(n, n, n, 128, 256, 64, 4 stages, 256 threads, panel 8)):
  base    the source as generated (the epilogue's lanes exchange pairs for 16-byte stores)
  noxchg  generated with TL_DISABLE_STORE_EXCHANGE: each lane stores its own pairs (4 bytes)
  perthread every consumer thread arrives on the empty barriers (count 256), as before
  fence   fence.proxy.async before each wgmma although TMA alone wrote the operands
The first probes (2026-11-26, H100) had the exchange and a per-warp release of the stages ("warp": one
mbarrier arrival per warp instead of per thread), and no proxy fence before wgmma on TMA-written
operands, as hand edits; all three are the code generator's now.
"""
import re
import sys

import torch

from gpu_common import bench, cuda, device_arch, record, rel_err
from flash_loop_counts import PREVIOUS, flash_before

import cuda_kernels as K




def variant(src, name, n):
    if name == "base":
        return src
    out = src
    if name == "perthread":  # the stages released by every consumer thread (the form before 2026-11-26)
        out, k = re.subn(r"(tl::mbarrier_init\(\(&tl_mbar\[[^\]]*\]\)), 8\);", r"\1, 256);", out)
        assert k >= 1, "empty-barrier init not found"
        out = out.replace("tl::mbarrier_arrive_warp(", "tl::mbarrier_arrive(")
    if name == "fence":  # fence.proxy.async before every wgmma (the form before 2026-11-26)
        out, k = re.subn(r"(tl::wgmma_gemm_[sr]s<[^>]*), false>\(", r"\1>(", out)
        assert k >= 1, "no fence-free wgmma"
    return out


class SourceKernel:
    def __init__(self, built, src):
        r = cuda.compile(src, "kernel.cu", built["arch"], False, False, [])
        self.kernel = cuda.Kernel(r["cubin"], built["meta"], built["num_params"], built["num_dyn"])
        self.registers = r["usage"][0]["registers"] if r["usage"] else 0

    def __call__(self, *tensors):
        self.kernel.launch([("ptr", t.data_ptr()) for t in tensors], torch.cuda.current_stream().cuda_stream,
                           torch.cuda.current_device())


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
                for name in ("base", "noxchg", "perthread", "fence"):
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


def flash():
    """Flash attention forward B8 H16 S4096 D128 fp16 (bench/gpu_hopper.py's shape), next to cuDNN,
    in interleaved rounds: the default (FA3's intra-warpgroup overlap, one CTA per tile) against
    TL_DISABLE_WGMMA_OVERLAP (each GEMM waited for where it is issued), with one CTA per tile and
    persistent, 2 and 3 stages; `before` is the default kernel as generated before the
    instruction-overhead changes of 2026-11-27 (flash_before), `exp2f` the default with
    TL_DISABLE_EXP2_FTZ only, `noprologue` the default with Q copied by the consumers instead of the
    producer's TMA (TL_DISABLE_PROLOGUE_TMA).

    The second session of 2026-11-27 (each change behind a switch, FLC.PREVIOUS all of them):
    `previous` = the kernel of the session before (all three off), `fenced` =
    TL_DISABLE_LOOP_PROXY_FENCE_ELISION (causal only differs), `clearS` = TL_DISABLE_WGMMA_ZERO_INIT,
    `rowsum` = TL_DISABLE_DEFERRED_ROW_SUM. `--short` times only overlap / previous / fenced / clearS /
    rowsum / persistent at 2 stages (and cuDNN), in 5 rounds: the A/B of these switches.

    The third session of 2026-11-27: `persistent` = TL_ENABLE_PERSISTENT_FLASH (one CTA per SM
    looping over the tiles, Q the producer's per-tile TMA load, causal tiles in pairs of
    complementary length). `--persistent` times only overlap / persistent at 2 and 3 stages (and
    cuDNN), in 5 rounds. A kernel that fell back to one CTA per tile (its shared memory did not fit
    the persistent form) is named with "(1/tile)".

    The fourth session of 2026-11-27: `--tma-store` times the default (`tmastore`: the output tile
    staged in shared memory and stored by TMA, src/target/cuda/ws_tma_store.h) against
    TL_DISABLE_TMA_STORE (`regstore`) at 2 and 3 stages (and cuDNN), in 5 rounds."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    B, H, S, D = 8, 16, 4096, 128
    torch.manual_seed(1)
    q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))
    short = "--short" in sys.argv
    modes = {"overlap": {}, "previous": dict(PREVIOUS),
             "fenced": {"tl.disable_loop_proxy_fence_elision": True},
             "clearS": {"tl.disable_wgmma_zero_init": True}, "rowsum": {"tl.disable_deferred_row_sum": True},
             "persistent": {"tl.enable_persistent_flash": True}}
    only_persistent = "--persistent" in sys.argv or "--tma-store" in sys.argv
    if "--tma-store" in sys.argv:
        modes = {"tmastore": {}, "regstore": {"tl.disable_tma_store": True}}
    elif only_persistent:
        modes = {"overlap": {}, "persistent": {"tl.enable_persistent_flash": True}}
    elif not short:
        modes.update({"noprologue": {"tl.disable_prologue_tma": True},
                      "plain": {"tl.disable_wgmma_overlap": True, "tl.disable_persistent": True},
                      "plain_persistent": {"tl.disable_wgmma_overlap": True}})
    for causal in (False, True):
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            fn = lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)  # noqa: E731
            ref = fn()
        rec = dict(bench="hopper_flash_variants", causal=causal)
        kernels = {}
        for stages in ((2,) if short and not only_persistent else (2, 3)):
            f = K.flashattn(B, H, S, D, causal, block_M=128, block_N=128, num_stages=stages, threads=256)
            for mode, cfg in modes.items():
                if causal is False and mode == "fenced":
                    continue  # the same kernel as overlap (Q comes by TMA: no fence to elide)
                built = cuda.build_func(f.ir, device_arch(), cfg, [])
                fell_back = mode == "persistent" and "tile_iter" not in built["source"]
                kernels[f"{mode}_s{stages}" + ("(1/tile)" if fell_back else "")] = SourceKernel(built, built["source"])
                if mode == "previous" and not short:  # the same kernel as generated before 2026-11-27
                    kernels[f"before_s{stages}"] = SourceKernel(built, flash_before(built["source"]))
            if stages == 2 and not short and not only_persistent:  # only exp2f's subnormal handling back
                built = cuda.build_func(f.ir, device_arch(), {"tl.disable_exp2_ftz": True}, [])
                kernels["exp2f_s2"] = SourceKernel(built, built["source"])
        for rnd in range(5 if short or only_persistent else 3):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                t_peer = bench(fn)
            rec.setdefault("cudnn_ms", []).append(t_peer)
            line = [f"cuDNN {flops / t_peer / 1e9:.0f}"]
            for name, kern in kernels.items():
                o = torch.full_like(q, float("nan"))
                kern(q, k, v, o)
                torch.cuda.synchronize()
                err = rel_err(o.transpose(1, 2), ref)
                ms = bench(lambda: kern(q, k, v, o))
                rec.setdefault(name, []).append(dict(ms=ms, tflops=flops / ms / 1e9, rel_err=err))
                line.append(f"{name} {flops / ms / 1e9:.0f} ({t_peer / ms:.3f}x){'' if err < 1e-2 else ' WRONG'}")
            print(f"flash causal={causal} round {rnd}: " + ", ".join(line), flush=True)
        record(**rec)


def mla():
    """examples/mla_decode B132 H128 S8192 (dim 512 + rope 64: bench/gpu_hopper.py's shape), dense and
    paged (pages of 64 tokens, shuffled), in 5 interleaved rounds, next to FlashMLA where
    TL_FLASHMLA_SRC names its checkout: `default` = block_N 64, 2 stages (the shipped configuration;
    plan_overlap refuses FA3's overlap at 2 stages for this loop, src/target/cuda/ws_overlap.h: it
    ran 356-419 TFLOPS per round against 390-484 without, H100, 2026-11-27), and at block_N 32 with
    4 stages `overlap_n32s4` (the overlap of the two score GEMMs with the softmax and P c_kv of the
    previous block, persistent) against `plain_n32s4` = TL_DISABLE_WGMMA_OVERLAP (each GEMM waited
    for where it is issued), and `overlap_n32s3`."""
    from gpu_hopper import _flashmla, load_example, mla_inputs
    ex = load_example("mla_decode")
    B, H, S, D, P, page = 132, 128, 8192, 512, 64, 64
    q, q_pe, kv, k_pe, ref = mla_inputs(B, H, S, D, P, seed=7)
    flops = ex.flops(B, H, S, D, P)
    per = S // page
    table = torch.randperm(B * per, device="cuda", dtype=torch.int32).reshape(B, per)
    rows = (table.long()[:, :, None] * page + torch.arange(page, device="cuda")).reshape(B, -1)
    kv_pool = torch.zeros(B * per * page, D, device="cuda", dtype=torch.float16)
    k_pe_pool = torch.zeros(B * per * page, P, device="cuda", dtype=torch.float16)
    kv_pool[rows.reshape(-1)] = kv.reshape(-1, D)
    k_pe_pool[rows.reshape(-1)] = k_pe.reshape(-1, P)
    modes = {"default": (64, 2, {}), "overlap_n32s4": (32, 4, {}),
             "plain_n32s4": (32, 4, {"tl.disable_wgmma_overlap": True}), "overlap_n32s3": (32, 3, {})}
    calls = {}
    for mode, (bn, st, cfg) in modes.items():
        for paged in (False, True):
            kw = dict(page_size=page, num_pages=B * per) if paged else {}
            f = ex.mla_decode(B, H, S, D, P, block_N=bn, block_H=64, num_stages=st, **kw)
            built = cuda.build_func(f.ir, device_arch(), cfg, [])
            kern = SourceKernel(built, built["source"])
            args = (q, q_pe, kv_pool, k_pe_pool, table) if paged else (q, q_pe, kv, k_pe)
            calls[mode + ("_paged" if paged else "")] = (kern, args)
            print(f"mla {mode}{' paged' if paged else ''}: regs {kern.registers}", flush=True)
    fm = _flashmla()
    rec = dict(bench="hopper_mla_variants", batch=B, heads=H, kv_len=S)
    for rnd in range(5):
        line = []
        if fm is not None:
            qf = torch.cat([q, q_pe], -1).unsqueeze(1)
            kc = torch.cat([kv, k_pe], -1).reshape(B * per, page, 1, D + P)
            tab = torch.arange(B * per, device="cuda", dtype=torch.int32).reshape(B, per)
            lens = torch.full((B,), S, device="cuda", dtype=torch.int32)
            t_peer = bench(lambda: fm.decode(qf, kc, tab, lens, (D + P) ** -0.5))
            del kc
            rec.setdefault("flashmla_ms", []).append(t_peer)
            line.append(f"FlashMLA {flops / t_peer / 1e9:.0f}")
        for name, (kern, args) in calls.items():
            o = torch.full((B, H, D), float("nan"), device="cuda", dtype=torch.float16)
            kern(*args, o)
            torch.cuda.synchronize()
            err = rel_err(o, ref)
            ms = bench(lambda: kern(*args, o))
            rec.setdefault(name, []).append(dict(ms=ms, tflops=flops / ms / 1e9, rel_err=err))
            vs = f" ({t_peer / ms:.3f}x)" if fm is not None else ""
            line.append(f"{name} {flops / ms / 1e9:.0f}{vs}{'' if err < 1e-2 else ' WRONG'}")
        print(f"mla round {rnd}: " + ", ".join(line), flush=True)
    record(**rec)


if __name__ == "__main__":
    if sys.argv[1:2] == ["flash"]:
        flash()
    elif sys.argv[1:2] == ["mla"]:
        mla()
    else:
        main([int(x) for x in sys.argv[1:]] or [4096, 8192])
