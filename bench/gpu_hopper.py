"""Hopper pipelines side by side (issue 16): the warp-specialized form (TMA producer warpgroup,
mbarrier-guarded stages: the sm_90a default) against the cp.async form (TL_DISABLE_WARP_SPECIALIZED)
and the peers, in one process: GEMM fp16 / bf16 4096^3 and 8192^3 against torch.matmul (cuBLAS),
flash-attention forward B8 H16 S4096 D128 (causal and not) against torch SDPA (cuDNN and FA2).
Every result is checked against torch first (float32 reference; NaN-poisoned outputs).

    python3 bench/gpu_hopper.py [gemm] [fp8] [flash] [mla] [host] [quick]

fp8: C (bf16) = A (e4m3) B^T (e4m3) against torch._scaled_mm.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_common import TorchKernel, bench, record, rel_err

import cuda_kernels as K

# ws: the sm_90a default (warp-specialized, persistent where balanced); wsnp: one CTA per tile;
# wspp: warpgroup ping-pong for two-GEMM loops (opt-in); cp: cp.async pipeline.
MODES = {"ws": {}, "wsnp": {"tl.disable_persistent": True},
         "wsno": {"tl.disable_wgmma_overlap": True},
         "wsnpno": {"tl.disable_persistent": True, "tl.disable_wgmma_overlap": True}, "wscl": {}, "wsclnomc": {"tl.disable_tma_multicast": True}, "wspp": {"tl.enable_warpgroup_pingpong": True},
         "cp": {"tl.disable_warp_specialized": True}}
GEMM_CONFIGS = [  # mode, block_M, block_N, block_K, threads, stages, swizzle panel[, cluster size]
    ("ws", 128, 256, 64, 256, 4, 8),
    ("ws", 128, 256, 64, 256, 4, 16),
    ("ws", 256, 128, 64, 256, 4, 8),
    ("ws", 128, 256, 64, 256, 3, 4),
    ("wsnp", 128, 256, 64, 256, 4, 16),
    ("cp", 128, 256, 64, 256, 4, 8),
    ("wscl", 128, 256, 64, 256, 4, 8, 2),   # thread-block clusters of 2: the A tile multicast
    ("wscl", 128, 256, 64, 256, 4, 16, 2),
    ("wscl", 256, 128, 64, 256, 4, 8, 2),
    ("wsclnomc", 128, 256, 64, 256, 4, 8, 2),   # the same launch without multicast
]
FLASH_CONFIGS = [  # mode, block_M, block_N, threads, stages
    ("ws", 128, 128, 256, 2),
    ("ws", 128, 128, 256, 3),
    ("wsno", 128, 128, 256, 2),
    ("wspp", 128, 128, 256, 2),
    ("wsnp", 128, 128, 256, 2),
    ("wsnp", 128, 128, 256, 3),
    ("wsnpno", 128, 128, 256, 2),
    ("cp", 128, 64, 256, 2),
]


def sass_stats(cubin):
    """Whole-kernel SASS counts (cuobjdump): tensor-core and memory instructions, local memory."""
    exe = shutil.which("cuobjdump")
    if not exe:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        sass = subprocess.run([exe, "-sass", f.name], capture_output=True, text=True).stdout
    ops = collections.Counter()
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if m:
            ops[re.sub(r"^@!?U?P\w+\s+", "", m.group(1)).split()[0].split(".")[0]] += 1
    keep = ("HGMMA", "QGMMA", "HMMA", "UTMALDG", "SYNCS", "WARPGROUP", "BAR", "LDL", "STL", "STG", "LDS", "STS", "MUFU")
    return {k: ops[k] for k in keep if ops.get(k)}


def tag_gemm(cfg):
    mode, bm, bn, bk, th, st, sw = cfg[:7]
    return f"{mode} {bm}x{bn}x{bk}/t{th}/s{st}/sw{sw}" + (f"/cl{cfg[7]}" if len(cfg) > 7 else "")


def gemm(quick):
    sizes = [4096] if quick else [4096, 8192]
    for dtype_name, dtype in [("float16", torch.float16), ("bfloat16", torch.bfloat16)]:
        for n in sizes:
            torch.manual_seed(n)
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            ref = torch.matmul(a.float(), b.float())
            flops = 2.0 * n ** 3
            t_cublas = bench(lambda: torch.matmul(a, b))
            print(f"gemm {dtype_name} {n} cuBLAS: {t_cublas:.3f} ms, {flops / t_cublas / 1e9:.0f} TFLOPS", flush=True)
            configs = GEMM_CONFIGS if (dtype_name == "float16" and n == 4096) else \
                [GEMM_CONFIGS[0], GEMM_CONFIGS[1], GEMM_CONFIGS[4], GEMM_CONFIGS[5], GEMM_CONFIGS[6], GEMM_CONFIGS[7]]
            best = {}
            for cfg in configs:
                mode, bm, bn, bk, th, st, sw = cfg[:7]
                try:
                    f = K.matmul(n, n, n, bm, bn, bk, dtype=dtype_name, num_stages=st, threads=th, swizzle_panel=sw,
                                 cluster=cfg[7] if len(cfg) > 7 else None)
                    k = TorchKernel(f, MODES[mode])
                    c = torch.full((n, n), float("nan"), device="cuda", dtype=dtype)
                    k(a, b, c)
                    torch.cuda.synchronize()
                    err = rel_err(c, ref)
                    ms = bench(lambda: k(a, b, c))
                except Exception as e:  # noqa: BLE001 - report and go on
                    print(f"gemm {dtype_name} {n} {tag_gemm(cfg)}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                    continue
                ok = err < 1e-2
                sass = sass_stats(k.built["cubin"]) if cfg == GEMM_CONFIGS[0] and n == sizes[0] else {}
                print(f"gemm {dtype_name} {n} {tag_gemm(cfg)}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOPS, "
                      f"{t_cublas / ms:.3f}x cuBLAS, rel err {err:.1e}{'' if ok else ' WRONG'}, regs {k.registers}, "
                      f"compile {k.compile_seconds:.2f} s" + (f", SASS {sass}" if sass else ""), flush=True)
                if ok and (mode not in best or ms < best[mode][0]):
                    best[mode] = (ms, tag_gemm(cfg), err)
            rec = dict(bench="hopper_gemm", dtype=dtype_name, size=n, cublas_ms=t_cublas,
                       cublas_tflops=flops / t_cublas / 1e9)
            for mode, (ms, tg, err) in best.items():
                rec[mode] = dict(config=tg, ms=ms, tflops=flops / ms / 1e9, ratio=t_cublas / ms, rel_err=err)
            record(**rec)


FP8_CONFIGS = [  # block_M, block_N, block_K, threads, stages, swizzle panel (B given as [N, K])
    (128, 256, 128, 256, 4, 8),
    (128, 256, 128, 256, 3, 16),
    (256, 128, 128, 256, 4, 8),
]


def fp8(quick):
    """C (bf16) = A (e4m3, [M, K]) @ B^T (e4m3, [N, K]), fp32 accumulation, against torch._scaled_mm
    (unit scales; cuBLAS), with and without its fast accumulation."""
    for n in ([4096] if quick else [4096, 8192]):
        torch.manual_seed(n + 1)
        a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)  # [N, K]
        ref = a.float() @ b.float().t()
        one = torch.ones((), device="cuda")
        flops = 2.0 * n ** 3
        peers = {}
        for name, fast in (("scaled_mm", False), ("scaled_mm_fast_accum", True)):
            try:
                fn = lambda: torch._scaled_mm(a, b.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)  # noqa
                err = rel_err(fn(), ref)
                peers[name] = bench(fn)
                print(f"fp8 {n} torch.{name}: {peers[name]:.3f} ms, {flops / peers[name] / 1e9:.0f} TFLOPS, rel err "
                      f"{err:.1e}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"fp8 {n} torch.{name} unavailable: {type(e).__name__}: {str(e)[:200]}", flush=True)
        best = None
        for cfg in FP8_CONFIGS:
            bm, bn, bk, th, st, sw = cfg
            tg = f"ws {bm}x{bn}x{bk}/t{th}/s{st}/sw{sw}"
            try:
                f = K.matmul(n, n, n, bm, bn, bk, dtype="float8_e4m3", accum_dtype="float32", out_dtype="bfloat16",
                             trans_B=True, num_stages=st, threads=th, swizzle_panel=sw)
                k = TorchKernel(f)
                c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                k(a, b, c)
                torch.cuda.synchronize()
                err = rel_err(c, ref)
                ms = bench(lambda: k(a, b, c))
            except Exception as e:  # noqa: BLE001
                print(f"fp8 {n} {tg}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                continue
            ok = err < 1e-2
            sass = sass_stats(k.built["cubin"]) if cfg == FP8_CONFIGS[0] and best is None else {}
            ratios = ", ".join(f"{peers[p] / ms:.3f}x {p}" for p in peers)
            print(f"fp8 {n} {tg}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOPS, {ratios}, rel err {err:.1e}"
                  f"{'' if ok else ' WRONG'}, regs {k.registers}" + (f", SASS {sass}" if sass else ""), flush=True)
            if ok and (best is None or ms < best[0]):
                best = (ms, tg, err)
        rec = dict(bench="hopper_fp8_gemm", size=n, **{p + "_ms": ms for p, ms in peers.items()})
        if best:
            rec["ws"] = dict(config=best[1], ms=best[0], tflops=flops / best[0] / 1e9, rel_err=best[2],
                             **{"ratio_vs_" + p: peers[p] / best[0] for p in peers})
        record(**rec)


def load_example(name):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", name, f"example_{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_FLASHMLA = []


def _flashmla():
    """FlashMLA built from the checkout named by TL_FLASHMLA_SRC (bench/peers/flashmla.py;
    TL_FLASHMLA_CUTLASS: CUTLASS's include directory), or None."""
    if not _FLASHMLA:
        src = os.environ.get("TL_FLASHMLA_SRC")
        fm = None
        if src:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
            import time as _t
            t0 = _t.time()
            try:
                import flashmla
                fm = flashmla.load(src, os.environ.get("TL_FLASHMLA_CUTLASS"), os.environ.get("TL_FLASHMLA_BUILD"))
                print(f"mla FlashMLA built from {src} in {_t.time() - t0:.0f} s", flush=True)
            except Exception as e:  # noqa: BLE001 - the peer is optional; say why it is missing
                msg = str(e)
                errs = [ln for ln in msg.splitlines() if "error" in ln.lower() and "-Werror" not in ln][:25]
                print(f"mla FlashMLA unavailable: {type(e).__name__}: " + ("\n".join(errs) or msg[-1500:]), flush=True)
        _FLASHMLA.append(fm)
    return _FLASHMLA[0]


def mla_inputs(batch, heads, kv_len, dim, pe_dim, seed):
    """Random fp16 q [B, H, dim], q_pe [B, H, pe_dim], kv [B, S, dim], k_pe [B, S, pe_dim] on the GPU and
    the float32 reference output [B, H, dim] of absorbed MLA decoding (softmax scale (dim + pe_dim)^-0.5)."""
    torch.manual_seed(seed)
    q = torch.randn(batch, heads, dim, device="cuda", dtype=torch.float16)
    q_pe = torch.randn(batch, heads, pe_dim, device="cuda", dtype=torch.float16)
    kv = torch.randn(batch, kv_len, dim, device="cuda", dtype=torch.float16)
    k_pe = torch.randn(batch, kv_len, pe_dim, device="cuda", dtype=torch.float16)
    scores = (torch.einsum("bhd,bsd->bhs", q.float(), kv.float()) +
              torch.einsum("bhd,bsd->bhs", q_pe.float(), k_pe.float())) * (dim + pe_dim) ** -0.5
    ref = torch.einsum("bhs,bsd->bhd", torch.softmax(scores, -1), kv.float())
    return q, q_pe, kv, k_pe, ref


def mla(quick):
    """examples/mla_decode (absorbed MLA decode: 128 heads, latent dim 512 + rope 64) against torch
    SDPA with the query heads grouped over the one latent head (whichever backend takes it; on
    torch 2.11 none takes head dim 576), torch eager (bmm, softmax, bmm) and the floor of reading
    the cache once at this GPU's copy bandwidth. The issue quotes TileLang's own example at 438
    TFLOPS / 0.69 ms (H100, batch 132, kv 8192). FlashMLA runs beside ours when TL_FLASHMLA_SRC names
    its checkout (built from source: no wheel runs with this torch); TileLang itself is compared by
    bench/gpu_vs_tilelang.py."""
    ex = load_example("mla_decode")
    H, D, P = 128, 512, 64
    shapes = [(132, 8192)] if quick else [(132, 8192), (64, 8192), (132, 4096)]
    for batch, kv_len in shapes:
        q, q_pe, kv, k_pe, ref = mla_inputs(batch, H, kv_len, D, P, seed=batch + kv_len)
        flops = ex.flops(batch, H, kv_len, D, P)
        peers = {}
        # Floors measured in this run: reading the cache once at the copy bandwidth of this GPU
        # (a device-to-device copy of the same bytes moves them twice), and the FLOPs at cuBLAS's
        # fp16 rate on a large GEMM.
        cache = torch.cat([kv, k_pe], -1)
        dst = torch.empty_like(cache)
        t_copy = bench(lambda: dst.copy_(cache))
        del dst
        floor_bytes = t_copy / 2
        peers["kv_read_floor"] = floor_bytes
        print(f"mla B{batch} S{kv_len} floor: reading the cache once {floor_bytes:.3f} ms "
              f"({cache.numel() * 2 / floor_bytes / 1e6:.0f} GB/s, half a copy)", flush=True)

        def eager():  # what torch does without a fused kernel: two batched GEMMs and a softmax
            s = torch.matmul(torch.cat([q, q_pe], -1), cache.transpose(1, 2)) * (D + P) ** -0.5
            return torch.matmul(torch.softmax(s.float(), -1).half(), kv)
        err = rel_err(eager(), ref)
        peers["torch_eager"] = bench(eager)
        print(f"mla B{batch} S{kv_len} torch eager (bmm, softmax, bmm): {peers['torch_eager']:.3f} ms, "
              f"{flops / peers['torch_eager'] / 1e9:.0f} TFLOPS, rel err {err:.1e}", flush=True)
        qq = torch.cat([q, q_pe], -1).unsqueeze(2)            # [B, H, 1, 576]
        kk = torch.cat([kv, k_pe], -1).unsqueeze(1)           # [B, 1, S, 576]
        vv = kv.unsqueeze(1)                                  # [B, 1, S, 512]
        for name, backend in [("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION), ("sdpa_flash", SDPBackend.FLASH_ATTENTION),
                              ("sdpa_efficient", SDPBackend.EFFICIENT_ATTENTION)]:
            try:
                with sdpa_kernel(backend):
                    fn = lambda: torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, enable_gqa=True)  # noqa
                    err = rel_err(fn().squeeze(2), ref)
                    peers[name] = bench(fn)
                print(f"mla B{batch} S{kv_len} torch {name}: {peers[name]:.3f} ms, "
                      f"{flops / peers[name] / 1e9:.0f} TFLOPS, rel err {err:.1e}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"mla B{batch} S{kv_len} torch {name} unavailable: {type(e).__name__}: {str(e)[:160]}", flush=True)
        fm = _flashmla()
        if fm is not None and kv_len % 64 == 0:
            # FlashMLA's dense decode on the same cache as pages of 64 tokens in order ([pages, 64, 1, 576]).
            per = kv_len // 64
            qf = torch.cat([q, q_pe], -1).unsqueeze(1)
            kc = cache.reshape(batch * per, 64, 1, D + P)
            tab = torch.arange(batch * per, device="cuda", dtype=torch.int32).reshape(batch, per)
            lens = torch.full((batch,), kv_len, device="cuda", dtype=torch.int32)
            fn = lambda: fm.decode(qf, kc, tab, lens, (D + P) ** -0.5)  # noqa: E731
            try:
                err = rel_err(fn().squeeze(1), ref)
                peers["flashmla"] = bench(fn)
                print(f"mla B{batch} S{kv_len} FlashMLA: {peers['flashmla']:.3f} ms, "
                      f"{flops / peers['flashmla'] / 1e9:.0f} TFLOPS, rel err {err:.1e}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"mla B{batch} S{kv_len} FlashMLA failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
        best = None
        # wsno: the overlap off (TL_DISABLE_WGMMA_OVERLAP), the A/B of issue 16's overlap for MLA's
        # three GEMMs; not a candidate for `best` (the shipped default is ws). At block_N 64 the
        # loop has 2 stages and plan_overlap refuses the overlap (c_kv's stage would be held one
        # iteration longer: ws_overlap.h), so ws = wsno there; at block_N 32, 3 or 4 stages fit
        # the shared memory (202 / 222 KiB, sm_90a) and ws is overlapped: does it pay there?
        for mode, bn, st in (("ws", 64, 2), ("wsno", 64, 2), ("ws", 32, 4), ("wsno", 32, 4), ("ws", 32, 3),
                             ("wsnp", 64, 2), ("cp", 64, 2)):
            tg = f"{mode} block_N{bn}/s{st}"
            try:
                k = TorchKernel(ex.mla_decode(batch, H, kv_len, D, P, block_N=bn, block_H=64, num_stages=st),
                                MODES[mode])
                o = torch.full((batch, H, D), float("nan"), device="cuda", dtype=torch.float16)
                k(q, q_pe, kv, k_pe, o)
                torch.cuda.synchronize()
                err = rel_err(o, ref)
                ms = bench(lambda: k(q, q_pe, kv, k_pe, o))
            except Exception as e:  # noqa: BLE001
                print(f"mla B{batch} S{kv_len} {tg}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                continue
            ok = err < 1e-2
            ratios = ", ".join(f"{peers[p] / ms:.3f}x {p}" for p in peers)
            print(f"mla B{batch} S{kv_len} {tg}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOPS "
                  f"({flops / 1e9 / 438 / ms:.3f}x TileLang's quoted 438), {ratios}, rel err {err:.1e}"
                  f"{'' if ok else ' WRONG'}, regs {k.registers}, compile {k.compile_seconds:.2f} s", flush=True)
            if ok and mode != "wsno" and (best is None or ms < best[0]):
                best = (ms, tg)
        # Paged cache (pages of 64 tokens, shuffled over the pool): the producer reads the block
        # table for each TMA box's coordinates.
        page = 64
        per_seq = (kv_len + page - 1) // page
        table = torch.randperm(batch * per_seq, device="cuda", dtype=torch.int32).reshape(batch, per_seq)
        kv_pool = torch.zeros(batch * per_seq * page, D, device="cuda", dtype=torch.float16)
        k_pe_pool = torch.zeros(batch * per_seq * page, P, device="cuda", dtype=torch.float16)
        rows = (table.long()[:, :, None] * page + torch.arange(page, device="cuda")).reshape(batch, -1)[:, :kv_len]
        kv_pool[rows.reshape(-1)] = kv.reshape(-1, D)
        k_pe_pool[rows.reshape(-1)] = k_pe.reshape(-1, P)
        paged_best = None
        for mode in ("ws", "wsno", "cp"):
            tg = f"{mode} paged{page} block_N64/s2"
            try:
                k = TorchKernel(ex.mla_decode(batch, H, kv_len, D, P, block_N=64, block_H=64, num_stages=2,
                                              page_size=page, num_pages=batch * per_seq), MODES[mode])
                o = torch.full((batch, H, D), float("nan"), device="cuda", dtype=torch.float16)
                k(q, q_pe, kv_pool, k_pe_pool, table, o)
                torch.cuda.synchronize()
                err = rel_err(o, ref)
                ms = bench(lambda: k(q, q_pe, kv_pool, k_pe_pool, table, o))
            except Exception as e:  # noqa: BLE001
                print(f"mla B{batch} S{kv_len} {tg}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                continue
            ratios = ", ".join(f"{peers[p] / ms:.3f}x {p}" for p in peers)
            print(f"mla B{batch} S{kv_len} {tg}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOPS, {ratios}, rel err "
                  f"{err:.1e}{'' if err < 1e-2 else ' WRONG'}, regs {k.registers}", flush=True)
            if err < 1e-2 and mode == "ws":
                paged_best = dict(ms=ms, config=tg)
        del kv_pool, k_pe_pool
        rec = dict(bench="hopper_mla_decode", batch=batch, kv_len=kv_len, heads=H,
                   **{p + "_ms": ms for p, ms in peers.items()})
        if best:
            rec["ours"] = dict(config=best[1], ms=best[0], tflops=flops / best[0] / 1e9,
                               **{"ratio_vs_" + p: peers[p] / best[0] for p in peers})
        if paged_best:
            rec["ours_paged"] = dict(paged_best, tflops=flops / paged_best["ms"] / 1e9)
        record(**rec)


def flash(quick):
    B, H, S, D = 8, 16, 4096, 128
    torch.manual_seed(1)
    q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))
    for causal in ((True,) if quick else (False, True)):
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        peers, ref = {}, None
        for name, backend in [("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)]:
            try:
                with sdpa_kernel(backend):
                    fn = lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)  # noqa
                    out = fn()
                    peers[name] = bench(fn)
                    ref = out if ref is None else ref
                print(f"flash causal={causal} {name}: {peers[name]:.3f} ms, {flops / peers[name] / 1e9:.0f} TFLOPS",
                      flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"flash {name} unavailable: {e}", flush=True)
        best = {}
        for cfg in FLASH_CONFIGS:
            mode, bm, bn, th, st = cfg
            tg = f"{mode} {bm}x{bn}/t{th}/s{st}"
            try:
                f = K.flashattn(B, H, S, D, causal, block_M=bm, block_N=bn, num_stages=st, threads=th)
                kern = TorchKernel(f, MODES[mode])
                o = torch.full_like(q, float("nan"))
                kern(q, k, v, o)
                torch.cuda.synchronize()
                err = rel_err(o.transpose(1, 2), ref)
                ms = bench(lambda: kern(q, k, v, o))
            except Exception as e:  # noqa: BLE001
                print(f"flash causal={causal} {tg}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                continue
            ok = err < 1e-2
            sass = sass_stats(kern.built["cubin"]) if cfg == FLASH_CONFIGS[0] else {}
            ratios = ", ".join(f"{peers[p] / ms:.3f}x {p}" for p in peers)
            print(f"flash causal={causal} {tg}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOPS, {ratios}, rel err "
                  f"{err:.1e}{'' if ok else ' WRONG'}, regs {kern.registers}" + (f", SASS {sass}" if sass else ""),
                  flush=True)
            if ok and (mode not in best or ms < best[mode][0]):
                best[mode] = (ms, tg)
        rec = dict(bench="hopper_flash", causal=causal, shape=f"B{B} H{H} S{S} D{D}")
        for p, ms in peers.items():
            rec[p + "_ms"] = ms
        for mode, (ms, tg) in best.items():
            rec[mode] = dict(config=tg, ms=ms, tflops=flops / ms / 1e9,
                             **{"ratio_vs_" + p: peers[p] / ms for p in peers})
        record(**rec)


def host(quick):
    """Host time per call of a warp-specialized GEMM (two tensor maps: encoded at the first call and
    again only when a tensor's pointer or shape changes) through the user's `tilelang.compile`,
    against the same kernel without TMA (TL_DISABLE_WARP_SPECIALIZED) and torch.add, plus the
    cold compile of the 4096^3 GEMM (empty cache)."""
    import time

    import tilelang
    import tilelang.cache
    from gpu_overhead import per_call_us

    n = 256
    sets = [tuple(torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(3)) for _ in range(2)]
    f = K.matmul(n, n, n, 128, 128, 64, num_stages=3, threads=256)
    ws = tilelang.compile(f, target="cuda")
    cp = tilelang.compile(f, target="cuda", pass_configs={"tl.disable_warp_specialized": True})
    assert "tma_load" in ws.get_kernel_source() and "tma_load" not in cp.get_kernel_source()
    for kern in (ws, cp):
        a, b, c = sets[0]
        kern(a, b, c)
        torch.cuda.synchronize()
        assert rel_err(c, a.float() @ b.float()) < 1e-2
    flip = [0]

    def alternating():
        flip[0] ^= 1
        ws(*sets[flip[0]])
    a, b, c = sets[0]
    fig = {"ws_same_tensors_us": per_call_us(lambda: ws(a, b, c), n=200),
           "ws_alternating_tensors_us": per_call_us(alternating, n=200),
           "cp_same_tensors_us": per_call_us(lambda: cp(a, b, c), n=200),
           "torch_add_us": per_call_us(lambda: torch.add(a, b, out=c), n=200)}
    # Cold: a fresh process (this one has compiled the same GEMM in the gemm section, and a process
    # builds each distinct source once) with the on-disk cache off; import time excluded.
    code = ("import time, torch, tilelang, cuda_kernels as K\n"
            "tilelang.cache.disable_cache()\n"
            "a, b, c = (torch.randn(4096, 4096, device='cuda', dtype=torch.float16) for _ in range(3))\n"
            "torch.cuda.synchronize()\n"
            "t = time.perf_counter()\n"
            "k = tilelang.compile(K.matmul(4096, 4096, 4096, 128, 256, 64, num_stages=4, threads=256, "
            "swizzle_panel=8), target='cuda')\n"
            "k(a, b, c)\n"
            "torch.cuda.synchronize()\n"
            "print(time.perf_counter() - t)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    try:
        fig["cold_compile_and_first_call_gemm4096_s"] = float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"host cold compile failed: {out.stderr[-500:]}", flush=True)
    for k, v in fig.items():
        print(f"host {k}: {v:.3f}", flush=True)
    record(bench="hopper_host", **fig)


if __name__ == "__main__":
    args = sys.argv[1:] or ["gemm", "fp8", "flash", "mla"]
    quick = "quick" in args
    if "gemm" in args:
        gemm(quick)
    if "fp8" in args:
        fp8(quick)
    if "flash" in args:
        flash(quick)
    if "mla" in args:
        mla(quick)
    if "host" in args:
        host(quick)
