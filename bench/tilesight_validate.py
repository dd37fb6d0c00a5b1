"""TileSight validation: for each workload, estimate every configuration (no run), then compile and
measure each one, and report the Spearman rank correlation between estimate and measurement, the
measured time of the estimated-best configuration against the measured best (and of the best of the
estimated top 3, what `tilelang.autotune(top_k=3)` would keep), and the tuning wall time exhaustive vs
top_k=3.

    python bench/tilesight_validate.py --target cuda --out tilesight_cuda.json [--deadline 1500]
    python bench/tilesight_validate.py --target cpu --out tilesight_cpu.json
    python bench/tilesight_validate.py --target ascend --out tilesight_ascend.json

Workloads:
  cuda   GEMM fp16 (fp32 accumulate) at 4096^3, 8192x8192x1024 and 512x4096x8192, 24 configs each
         (block_M/N/K, stages, threads); flash-attention forward B8 H16 S4096 D128 fp16, causal and not,
         24 configs each (block_M/N, stages, threads; 64 x 256 / 2 stages overflows shared memory and is
         reported as not fitting, not measured). Kernels: tests/python/kernel_zoo.py, launched
         through bench/gpu_common.TorchKernel, timed with CUDA events (median, L2 flushed), results
         checked against torch. Machine description: H100 SXM on sm_90 (H200 SXM when the device is
         an H200), A100 SXM below. --workloads gemm / flash runs one family (each takes ~5 minutes
         on an H100).
  cpu    GEMM fp32 1024^3, 24 tilings, on this machine: all compiled first (in parallel, fresh cache) and
         checked, then timed in shuffled interleaved rounds for --cpu-seconds (default 60); each keeps the
         median over rounds of its time over the round's geometric mean (round_normalized_medians). The
         JSON records the CPU model, the runtime's thread count and the load. About 2.5 minutes on a
         2-vCPU VM, less on a larger host.
  cuda-compile  no device: per cuda configuration (GEMM 4096^3 and flash) the time of the frontend, the
         estimate, lowering + codegen and NVRTC (sm_90a), and the AutoTuner's compile phase exhaustive vs
         top_k=3 with its default parallelism (fresh caches, both orders).
  ascend the Expert GEMM of examples/ascend/gemm_expert.py at 2048^3 (24 block_M/N, K_L1 choices), measured
         as the simulator's modelled time (TL_ASCEND_SIM_TIMING_ONLY: timing, no values).

Every configuration runs in its own try/except (a failure is recorded, not fatal); --deadline (seconds)
stops starting new configurations once passed; the JSON (--out) is rewritten after every workload.
After the per-config sweep, tilelang's AutoTuner itself runs over the same configurations twice, exhaustive
and with top_k=3, each with a fresh kernel cache (cpu, ascend, the first cuda GEMM shape and non-causal
flash attention, the cuda ones with TileLang's default warmup=25 / rep=100 ms; --no-autotune skips it):
its wall times and the latency of the configuration each picks go under "autotune".

The lead's GPU run (one H100/H200, about 5-6 minutes, two files):
    python bench/tilesight_validate.py --target cuda --workloads gemm,flash --gemm-shapes 3 --deadline 300 \
        --out $OUT/tilesight_cuda.json > $OUT/tilesight_cuda.log 2>&1
The end-to-end AutoTuner comparison alone (GEMM 4096^3 and non-causal flash, ~110 s on an H100; each
mode's "phases_s" says where its wall time went: build, rank, compile, measure, inputs):
    python3 bench/tilesight_validate.py --target cuda --workloads gemm,flash --gemm-shapes 1 --deadline 150 \
        --out $OUT/ts.json > $OUT/ts.log 2>&1
No device: the tuner's compile phase, exhaustive vs top_k=3, alternating (TILELANG_SERIAL_LOWERING=1
for the lowering serialized as before 2026-11-27):
    python bench/tilesight_validate.py --target cuda-compile --phases-only --out /tmp/phases.json
"""
import argparse
import json
import math
import os
import platform
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "ascend"))
sys.path.insert(0, HERE)

import tilelang  # noqa: E402
from tilelang import tilesight  # noqa: E402

import kernel_zoo as zoo  # noqa: E402

T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


class Deadline:
    def __init__(self, seconds):
        self.end = T0 + seconds if seconds else None

    def passed(self):
        return self.end is not None and time.time() > self.end


def summarize(name, rows, k=3):
    ok = [r for r in rows if r.get("measured_ms") is not None and r.get("est_ms") is not None]
    out = {"workload": name, "configs": len(rows), "measured": len(ok),
           "failed": [{"config": r["config"], "error": r.get("error")} for r in rows if r.get("error")]}
    if len(ok) >= 3:
        est = [r["est_ms"] for r in ok]
        meas = [r["measured_ms"] for r in ok]
        out["spearman"] = tilesight.spearman(est, meas)
        best_meas = min(ok, key=lambda r: r["measured_ms"])
        best_est = min(ok, key=lambda r: r["est_ms"])
        topk = sorted(ok, key=lambda r: r["est_ms"])[:k]
        best_topk = min(topk, key=lambda r: r["measured_ms"])
        out.update(
            measured_best_ms=best_meas["measured_ms"], measured_best_config=best_meas["config"],
            estimated_best_config=best_est["config"], estimated_best_measured_ms=best_est["measured_ms"],
            estimated_best_over_measured_best=best_est["measured_ms"] / best_meas["measured_ms"],
            top_k=k, top_k_best_measured_ms=best_topk["measured_ms"],
            top_k_best_over_measured_best=best_topk["measured_ms"] / best_meas["measured_ms"])
        exhaustive = sum(r.get("compile_s", 0) + r.get("measure_s", 0) for r in ok)
        topk_cost = sum(r.get("compile_s", 0) + r.get("measure_s", 0) for r in topk) + \
            sum(r.get("estimate_s", 0) for r in ok)
        out.update(tuning_wall_exhaustive_s=exhaustive, tuning_wall_top_k_s=topk_cost,
                   tuning_speedup=exhaustive / topk_cost if topk_cost > 0 else None)
        if all(r.get("round_ms") for r in ok):
            # cpu: the fastest round of each configuration (the least disturbed by other processes)
            mins = [min(r["round_ms"]) for r in ok]
            out["spearman_vs_fastest_round"] = tilesight.spearman(est, mins)
            best_min = min(mins)
            out["estimated_best_fastest_round_over_best"] = min(best_est["round_ms"]) / best_min
            out["top_k_best_fastest_round_over_best"] = min(min(r["round_ms"]) for r in topk) / best_min
        bounds = {}
        for r in ok:
            bounds[r["bound"]] = bounds.get(r["bound"], 0) + 1
        out["bounds"] = bounds
    log(f"== {name}: " + ", ".join(f"{k2}={v:.3f}" if isinstance(v, float) else f"{k2}={v}"
                                    for k2, v in out.items() if k2 not in ("failed",)))
    return out


def run_workload(name, configs, build, measure, machine, deadline, dyn=None):
    """configs: list of dicts; build(cfg) -> prim func; measure(cfg, func) -> (ms, compile_s, measure_s)."""
    rows = []
    log(f"workload {name}: {len(configs)} configs on {machine.name}")
    for i, cfg in enumerate(configs):
        row = {"config": cfg}
        rows.append(row)
        if deadline.passed():
            row["error"] = "skipped: deadline passed"
            continue
        try:
            f = build(cfg)
            t = time.time()
            est = tilesight.estimate(f, machine=machine, dyn=dyn)
            row["estimate_s"] = time.time() - t
            row.update(est_ms=est.time_ms if est.fits else None, bound=est.bound, fits=est.fits,
                       est_compute_ms=est.compute_s * 1e3, est_memory_ms=est.memory_s * 1e3,
                       est_latency_ms=est.latency_s * 1e3, blocks_per_unit=est.blocks_per_unit,
                       waves=est.waves, shared_bytes=est.shared_bytes, est_registers=est.registers_per_thread)
            if not est.fits:
                row["reasons"] = est.reasons
        except Exception as e:  # noqa: BLE001
            row["error"] = f"estimate: {type(e).__name__}: {str(e)[:300]}"
            log(f"  [{i + 1}/{len(configs)}] {cfg}: {row['error']}")
            continue
        try:
            ms, cs, mts, extra = measure(cfg, f)
            row.update(measured_ms=ms, compile_s=cs, measure_s=mts, **extra)
        except Exception as e:  # noqa: BLE001
            row["error"] = f"measure: {type(e).__name__}: {str(e)[:300]}"
            if os.environ.get("TL_VALIDATE_TRACE"):
                traceback.print_exc()
        est_txt = f"{row['est_ms']:.4f} ms ({row['bound']})" if row.get("est_ms") else f"does not fit {row.get('reasons')}"
        meas_txt = f"{row['measured_ms']:.4f} ms" if row.get("measured_ms") else row.get("error", "")
        log(f"  [{i + 1}/{len(configs)}] {cfg}: est {est_txt}, measured {meas_txt}")
    return {"summary": summarize(name, rows), "rows": rows}


def autotune_end_to_end(name, builder, configs, target, k=3, warmup=5, rep=20, sweep=None, modes=None):
    """Wall time of tilelang's AutoTuner over `configs`, exhaustive and with top_k=k, each with a fresh
    kernel cache (nothing compiled before), and the latency of the configuration each one picks (as the
    tuner measured it, and as the sweep `sweep` (a workload result) measured it)."""
    import tempfile
    from tilelang import _core
    from tilelang.autotuner import AutoTuner
    out = {"workload": name, "configs": len(configs), "top_k": k, "warmup_ms": warmup, "rep_ms": rep,
           "compile_workers": AutoTuner._num_workers(len(configs))}
    for mode, top_k in (("exhaustive", None), (f"top_{k}", k)):
        if modes is not None and mode not in modes:
            continue
        os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"tl-tilesight-{mode}-")
        _core.clear_memo()
        t = time.time()
        try:
            tuner = AutoTuner.from_kernel(kernel=builder, configs=configs, top_k=top_k)
            tuner.set_compile_args(out_idx=[-1], target=target).set_profile_args(skip_check=True)
            tuner.verbose = False
            res = tuner.run(warmup=warmup, rep=rep)
            out[mode] = {"wall_s": time.time() - t, "latency_ms": res.latency, "config": res.config,
                         "measured": sum(1 for r in res.results if r.status == "ok"),
                         "phases_s": tuner.phase_seconds,
                         "statuses": {st: sum(1 for r in res.results if r.status == st)
                                      for st in sorted({r.status for r in res.results})}}
        except Exception as e:  # noqa: BLE001
            out[mode] = {"wall_s": time.time() - t, "error": f"{type(e).__name__}: {str(e)[:300]}"}
        log(f"  autotune {mode}: {out[mode]}")
    ex, tk = out.get("exhaustive", {}), out.get(f"top_{k}", {})
    if "latency_ms" in ex and "latency_ms" in tk:
        out["wall_speedup"] = ex["wall_s"] / tk["wall_s"]
        out["top_k_latency_over_exhaustive"] = tk["latency_ms"] / ex["latency_ms"]
        if sweep is not None:
            by_cfg = {json.dumps(r["config"], sort_keys=True): r.get("measured_ms") for r in sweep["rows"]}
            a = by_cfg.get(json.dumps(ex["config"], sort_keys=True))
            b = by_cfg.get(json.dumps(tk["config"], sort_keys=True))
            if a and b:
                out["picks_in_sweep_ms"] = {"exhaustive": a, f"top_{k}": b, "ratio": b / a}
    log(f"== autotune {name}: wall speed-up {out.get('wall_speedup')}, picked latency ratio "
        f"{out.get('top_k_latency_over_exhaustive')}")
    return out


# ---- cuda --------------------------------------------------------------------------------------------------
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 1024), (512, 4096, 8192)]
GEMM_CONFIGS = [dict(block_M=bm, block_N=bn, block_K=bk, num_stages=st, threads=th) for bm, bn, bk, st, th in [
    (128, 128, 32, 2, 128), (128, 128, 32, 3, 128), (128, 128, 64, 3, 128), (128, 128, 64, 2, 256),
    (128, 256, 32, 3, 256), (128, 256, 64, 3, 256), (256, 128, 32, 3, 256), (256, 128, 64, 3, 256),
    (64, 64, 32, 2, 128), (64, 64, 64, 4, 128), (64, 128, 32, 3, 128), (128, 64, 32, 3, 128),
    (64, 256, 32, 3, 128), (256, 64, 32, 3, 128), (128, 128, 32, 1, 128), (64, 64, 32, 1, 128),
    (128, 256, 32, 4, 256), (256, 256, 32, 2, 256), (32, 64, 32, 2, 128), (64, 32, 64, 2, 128),
    (128, 128, 128, 2, 128), (256, 128, 32, 2, 128), (128, 64, 64, 4, 128), (64, 128, 64, 2, 256)]]
FLASH_CONFIGS = [dict(block_M=bm, block_N=bn, num_stages=st, threads=th) for bm, bn, st, th in [
    (64, 64, 1, 128), (64, 64, 2, 128), (64, 128, 2, 128), (128, 64, 2, 128), (128, 128, 2, 128),
    (128, 64, 2, 256), (128, 128, 2, 256), (128, 128, 1, 256), (64, 32, 2, 128), (64, 64, 2, 256),
    (128, 32, 2, 256), (64, 128, 1, 128), (128, 64, 1, 128), (128, 64, 3, 256), (64, 64, 3, 128),
    (256, 64, 2, 256), (64, 256, 2, 128), (128, 256, 1, 256), (64, 32, 1, 128), (256, 32, 2, 256),
    (128, 128, 3, 256), (64, 128, 3, 128), (128, 32, 3, 128), (64, 32, 3, 128)]]


def cuda_workloads(args, deadline, results, flush):
    import torch
    from gpu_common import TorchKernel, bench
    cap = torch.cuda.get_device_capability()
    name = torch.cuda.get_device_name()
    machine = (tilesight.A100_SXM if cap < (9, 0) else tilesight.H200_SXM if "H200" in name else tilesight.H100_SXM)
    results["device"] = torch.cuda.get_device_name()
    results["machine_description"] = machine.name
    torch.manual_seed(0)

    for (M, N, K) in (GEMM_SHAPES[: args.gemm_shapes] if "gemm" in args.workloads else []):
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        ref = (a.float() @ b.float())

        def build(cfg, M=M, N=N, K=K):
            return zoo.gemm(M, N, K, cfg["block_M"], cfg["block_N"], cfg["block_K"], "float16", "float32",
                            "float16", num_stages=cfg["num_stages"], threads=cfg["threads"])

        def measure(cfg, f, a=a, b=b, ref=ref, M=M, N=N):
            t = time.time()
            kern = TorchKernel(f)
            cs = time.time() - t
            c = torch.empty(M, N, device="cuda", dtype=torch.float16)
            kern(a, b, c)
            torch.cuda.synchronize()
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            if not err < 1e-2:
                raise AssertionError(f"wrong result (max rel err {err:.3e})")
            t = time.time()
            ms = bench(lambda: kern(a, b, c), max_seconds=2.0)
            return ms, cs, time.time() - t, {"registers": kern.registers, "tflops": 2.0 * M * N * K / ms / 1e9}

        results["workloads"].append(run_workload(f"cuda gemm fp16 {M}x{N}x{K}", GEMM_CONFIGS, build, measure,
                                                 machine, deadline))
        flush()
        if args.autotune and (M, N, K) == GEMM_SHAPES[0] and not deadline.passed():
            # the AutoTuner as it runs by default (TileLang's warmup=25, rep=100 ms; its default
            # compile parallelism), exhaustive vs top_k=3, each with a fresh kernel cache
            results["autotune"].append(autotune_end_to_end(
                f"cuda gemm fp16 {M}x{N}x{K}", lambda block_M, block_N, block_K, num_stages, threads, M=M, N=N, K=K:
                zoo.gemm(M, N, K, block_M, block_N, block_K, "float16", "float32", "float16", num_stages=num_stages,
                         threads=threads), GEMM_CONFIGS, "cuda", warmup=25, rep=100, sweep=results["workloads"][-1]))
            flush()
        del a, b, ref
        torch.cuda.empty_cache()

    if "flash" not in args.workloads:
        return
    B, H, S, D = args.flash_shape
    q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    for causal in (False, True):
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal).transpose(1, 2).float()
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)

        def build(cfg, causal=causal):
            return zoo.flashattn(B, H, S, D, causal, block_M=cfg["block_M"], block_N=cfg["block_N"],
                                 num_stages=cfg["num_stages"], threads=cfg["threads"])

        def measure(cfg, f, ref=ref, flops=flops):
            t = time.time()
            kern = TorchKernel(f)
            cs = time.time() - t
            o = torch.empty_like(q)
            kern(q, k, v, o)
            torch.cuda.synchronize()
            err = ((o.float() - ref).abs().max() / ref.abs().max()).item()
            if not err < 2e-2:
                raise AssertionError(f"wrong result (max rel err {err:.3e})")
            t = time.time()
            ms = bench(lambda: kern(q, k, v, o), max_seconds=2.0)
            return ms, cs, time.time() - t, {"registers": kern.registers, "tflops": flops / ms / 1e9}

        results["workloads"].append(run_workload(f"cuda flash fwd B{B} H{H} S{S} D{D} causal={causal}",
                                                 FLASH_CONFIGS, build, measure, machine, deadline))
        flush()
        if args.autotune and not causal and not deadline.passed():
            results["autotune"].append(autotune_end_to_end(
                f"cuda flash fwd B{B} H{H} S{S} D{D} causal=False",
                lambda block_M, block_N, num_stages, threads: zoo.flashattn(
                    B, H, S, D, False, block_M=block_M, block_N=block_N, num_stages=num_stages, threads=threads),
                FLASH_CONFIGS, "cuda", warmup=25, rep=100, sweep=results["workloads"][-1]))
            flush()


def tuner_compile_phase(builder, configs, target, top_k):
    """Wall time of the AutoTuner's work before measuring (build every IR; with top_k, TileSight's
    ranking, whose lowerings start while the IRs are built; then the parallel compiles with the
    tuner's default worker count), with a fresh kernel cache and memo. The same calls as
    AutoTuner._run, with a measurement that does nothing (it needs a device; with top_k the tuner
    measures each pick while the others compile: bench/tilesight_tuner_wall.py models that)."""
    import tempfile
    from tilelang import _core
    from tilelang.autotuner import AutoTuner
    from tilelang.autotuner.param import ConfigResult

    class NoMeasure:
        def measure(self, i, kernel):
            pass

    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-tilesight-compile-")
    _core.clear_memo()
    tuner = AutoTuner.from_kernel(kernel=builder, configs=configs, top_k=top_k)
    tuner.set_compile_args(out_idx=[-1], target=target)
    tuner.verbose = False
    reused0 = _core.prelower_reuse_count()
    t0 = time.time()
    results = [ConfigResult(dict(c)) for c in configs]
    prims, held, _ = tuner._build_and_rank(configs, results)
    t_ranked = time.time()
    kernels, _ = tuner._compile_and_measure(configs, prims, held, results, 600, NoMeasure())
    t_done = time.time()
    return {"top_k": top_k, "wall_s": t_done - t0, "build_rank_s": t_ranked - t0,
            "compile_s": t_done - t_ranked, "compiled": sum(1 for k in kernels if k is not None),
            "workers": tuner._num_workers(sum(1 for p in prims if p is not None)),
            "lowerings_reused": _core.prelower_reuse_count() - reused0,
            "picked": [r.config for r, k in zip(results, kernels) if k is not None]}


def cuda_compile_only(args, deadline, results, flush):
    """No device needed: for the cuda GEMM and flash configurations, per configuration the time of the
    frontend, TileSight's estimate, lowering + code generation and NVRTC (sm_90a), and the tuner's
    compile phase exhaustive vs top_k=3 (AutoTuner's default parallelism, fresh caches, both orders)."""
    from tilelang import _core
    from tilelang.tilesight.analysis import _prim_of
    results["device"] = "none (compile only, sm_90a)"
    results["cpu"] = cpu_facts(tilesight.local_cpu())
    target = "cuda -arch=sm_90a"
    families = []
    if "gemm" in args.workloads:
        M, N, K = GEMM_SHAPES[0]
        families.append((f"cuda gemm fp16 {M}x{N}x{K}", GEMM_CONFIGS,
                         lambda block_M, block_N, block_K, num_stages, threads: zoo.gemm(
                             M, N, K, block_M, block_N, block_K, "float16", "float32", "float16",
                             num_stages=num_stages, threads=threads)))
    if "flash" in args.workloads:
        B, H, S, D = args.flash_shape
        families.append((f"cuda flash fwd B{B} H{H} S{S} D{D}", FLASH_CONFIGS,
                         lambda block_M, block_N, num_stages, threads: zoo.flashattn(
                             B, H, S, D, False, block_M=block_M, block_N=block_N, num_stages=num_stages,
                             threads=threads)))
    _core.cuda.compile("extern \"C\" __global__ void warm() {}", "warm.cu", "sm_90a")  # NVRTC loaded once
    results["serial_lowering"] = os.environ.get("TILELANG_SERIAL_LOWERING", "0") not in ("", "0")
    for name, configs, builder in families:
        rows = []
        for cfg in (configs if not args.phases_only else []):
            row = {"config": cfg}
            rows.append(row)
            t = time.time()
            f = builder(**cfg)
            row["build_s"] = time.time() - t
            t = time.time()
            est = tilesight.estimate(f, machine=tilesight.H100_SXM)
            row["estimate_s"] = time.time() - t
            row["est_ms"] = est.time_ms if est.fits else None
            try:
                t = time.time()
                _, src = _core.cuda.lower_func(_prim_of(f), "sm_90a", {})
                row["lower_codegen_s"] = time.time() - t
                t = time.time()
                _core.cuda.compile(src, "kernel.cu", "sm_90a")
                row["nvrtc_s"] = time.time() - t
            except Exception as e:  # noqa: BLE001
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            log(f"  {cfg}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items() if k.endswith("_s")))
        tot = {k: sum(r.get(k, 0) for r in rows) for k in ("build_s", "estimate_s", "lower_codegen_s", "nvrtc_s")}
        log(f"== {name}: totals {tot}")
        phases = []
        modes = [None if m == "ex" else int(m) for m in args.phase_modes.split(",")]
        for top_k in (modes * args.phase_rounds if args.phases_only else (None, 3, 3, None)):
            phases.append(tuner_compile_phase(builder, configs, target, top_k))
            log(f"  tuner compile phase top_k={top_k}: {phases[-1]}")
        ex = [p["wall_s"] for p in phases if p["top_k"] is None]
        tk = [p["wall_s"] for p in phases if p["top_k"]]
        out = {"workload": name, "rows": rows, "totals": tot, "tuner_compile_phase": phases,
               "compile_phase_speedup": min(ex) / min(tk) if ex and tk else None}
        log(f"== {name}: tuner compile phase exhaustive {ex} s vs top_k=3 {tk} s"
            + (f": {min(ex) / min(tk):.2f}x" if ex and tk else ""))
        results["compile_only"] = results.get("compile_only", []) + [out]
        flush()


# ---- cpu ---------------------------------------------------------------------------------------------------
CPU_GEMM_CONFIGS = [dict(block_M=bm, block_N=bn, block_K=bk) for bm, bn, bk in [
    (16, 16, 16), (16, 64, 32), (32, 32, 32), (32, 64, 64), (32, 128, 32), (64, 32, 32), (64, 64, 32),
    (64, 64, 64), (64, 128, 64), (64, 256, 64), (128, 32, 64), (128, 64, 32), (128, 128, 32), (128, 128, 64),
    (128, 128, 128), (128, 256, 64), (256, 64, 64), (256, 128, 64), (256, 256, 32), (256, 256, 64),
    (256, 256, 128), (512, 256, 64), (16, 256, 64), (64, 16, 64)]]


def cpu_facts(machine):
    """What the cpu run ran on: the CPU model, its thread count, the description TileSight used."""
    from tilelang import _core
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu_model": model, "runtime_threads": _core.hardware_threads(), "os_cpu_count": os.cpu_count(),
            "load_average": list(os.getloadavg()),
            "tilesight_machine": {k: getattr(machine, k) for k in (
                "name", "cores", "vector_bits", "clock_hz", "l1_bytes", "l2_bytes", "l3_bytes") if hasattr(machine, k)}}


def interleaved_times(kernels, args, seconds, min_rounds, max_rounds, calls, seed=0):
    """Times every kernel in rounds: each round visits all of them once, in a fresh random order, and
    takes the median of `calls` calls (after one warm-up call). Returns {key: [ms per round]} and the
    round count. Rounds continue until `seconds` have passed (at least min_rounds, at most max_rounds)."""
    import random
    import statistics
    rng = random.Random(seed)

    def visit(kern):
        kern(*args)
        ts = []
        for _ in range(calls):
            t = time.perf_counter()
            kern(*args)
            ts.append((time.perf_counter() - t) * 1e3)
        return statistics.median(ts)

    keys = list(kernels)
    times = {k: [] for k in keys}
    t0 = time.time()
    rounds = 0
    while rounds < max_rounds and (rounds < min_rounds or time.time() - t0 < seconds):
        rng.shuffle(keys)
        for k in keys:
            times[k].append(visit(kernels[k]))
        rounds += 1
        log(f"  round {rounds}: {time.time() - t0:.1f} s")
    return times, rounds


def round_normalized_medians(times):
    """Per configuration: the median over rounds of its time over the round's geometric mean (over all
    configurations), times the median round's geometric mean. A load change that slows a whole round
    (another process taking a core) cancels out; what remains is how each configuration compares with the
    others in the same round."""
    import statistics
    keys = list(times)
    n = min(len(v) for v in times.values())
    gms = [math.exp(sum(math.log(times[k][r]) for k in keys) / len(keys)) for r in range(n)]
    scale = statistics.median(gms)
    return {k: statistics.median(times[k][r] / gms[r] for r in range(n)) * scale for k in keys}, gms


def cpu_workloads(args, deadline, results, flush):
    import concurrent.futures
    import statistics
    import numpy as np
    machine = tilesight.local_cpu()
    results["device"] = machine.name
    results["machine_description"] = machine.name
    results["cpu"] = cpu_facts(machine)
    log(f"cpu: {results['cpu']['cpu_model']}, {results['cpu']['runtime_threads']} runtime threads, "
        f"load {results['cpu']['load_average']}")
    n = args.cpu_size
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)

    def build(cfg):
        return zoo.gemm(n, n, n, cfg["block_M"], cfg["block_N"], cfg["block_K"], "float32", "float32", "float32",
                        num_stages=1)

    # Every configuration is compiled (in parallel, as the autotuner does) and checked first; then all
    # are timed in interleaved rounds (a fresh random order each round, see interleaved_times), and each
    # keeps the median over rounds of its time relative to the round's geometric mean
    # (round_normalized_medians): the load of a shared machine drifts within seconds, and a sequential
    # sweep would rank configurations by when they ran.
    compiled, failures = {}, {}
    import tempfile
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-tilesight-cpu-")  # compile times: no cache hits
    from tilelang import _core
    _core.clear_memo()

    def compile_one(cfg):
        t = time.time()
        # each configuration keeps its tiles: the estimate reads the program as written, and
        # coarsen_gemm_blocks would run the small-tile ones as the same large blocks
        kern = tilelang.compile(build(cfg), out_idx=[-1], target="cpu",
                                pass_configs={"tl.disable_cpu_block_coarsening": True})
        return kern, time.time() - t

    t = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        futs = {tuple(cfg.values()): pool.submit(compile_one, cfg) for cfg in CPU_GEMM_CONFIGS}
        for key, fut in futs.items():
            try:
                kern, cs = fut.result()
                c = kern(a, b)
                err = float(np.abs(c - ref).max() / np.abs(ref).max())
                if not err < 1e-4:
                    raise AssertionError(f"wrong result (max rel err {err:.3e})")
                compiled[key] = (kern, cs)
            except Exception as e:  # noqa: BLE001
                failures[key] = e
    log(f"cpu: {len(compiled)} kernels compiled and checked in {time.time() - t:.1f} s; timing in interleaved "
        f"rounds ({args.cpu_seconds:.0f} s, {args.cpu_calls} calls per visit)")
    t = time.time()
    times, rounds = interleaved_times({k: v[0] for k, v in compiled.items()}, (a, b), args.cpu_seconds,
                                      args.cpu_min_rounds, args.cpu_max_rounds, args.cpu_calls)
    timing_s = time.time() - t
    normalized, gms = round_normalized_medians(times) if compiled else ({}, [])
    results["cpu"].update(rounds=rounds, timing_s=timing_s, round_geomean_ms=gms,
                          load_average_after=list(os.getloadavg()))
    log(f"cpu: {rounds} rounds in {timing_s:.1f} s; round geometric means "
        f"{min(gms) if gms else 0:.2f}-{max(gms) if gms else 0:.2f} ms")

    def measure(cfg, f):
        key = tuple(cfg.values())
        if key in failures:
            raise failures[key]
        kern, cs = compiled[key]
        ms = normalized[key]
        per_call = statistics.median(times[key])
        # the time it takes the tuner to measure it: a visit of `calls` calls + one warm-up
        return ms, cs, per_call * (args.cpu_calls + 1) / 1e3, {
            "gflops": 2.0 * n ** 3 / ms / 1e6, "round_ms": times[key], "raw_median_ms": per_call}

    results["workloads"].append(run_workload(f"cpu gemm fp32 {n}^3", CPU_GEMM_CONFIGS, build, measure, machine,
                                             deadline))
    flush()
    if args.autotune and not deadline.passed():
        results["autotune"].append(autotune_end_to_end(
            f"cpu gemm fp32 {n}^3", lambda block_M, block_N, block_K: zoo.gemm(
                n, n, n, block_M, block_N, block_K, "float32", "float32", "float32", num_stages=1),
            CPU_GEMM_CONFIGS, "cpu", sweep=results["workloads"][-1]))
        flush()


# ---- ascend ------------------------------------------------------------------------------------------------
ASCEND_CONFIGS = [dict(block_M=bm, block_N=bn, K_L1=kl, core_num=cn) for bm, bn, kl, cn in [
    (64, 64, 64, 24), (64, 64, 128, 24), (64, 128, 128, 24), (128, 64, 128, 24), (128, 128, 64, 24),
    (128, 128, 128, 24), (128, 128, 256, 24), (128, 256, 128, 24), (256, 128, 128, 24), (64, 256, 128, 24),
    (256, 64, 128, 24), (64, 128, 256, 24), (128, 64, 256, 24), (256, 128, 256, 24), (128, 256, 256, 24),
    (128, 128, 128, 16), (128, 128, 128, 8), (64, 64, 128, 12), (256, 128, 128, 20), (128, 256, 128, 20),
    (64, 64, 256, 24), (256, 64, 256, 24), (64, 256, 256, 24), (128, 128, 512, 24)]]


def ascend_workloads(args, deadline, results, flush):
    import numpy as np
    import gemm_expert
    os.environ["TL_ASCEND_SIM_TIMING_ONLY"] = "1"
    machine = tilesight.ascend_machine("A2")
    results["device"] = "Ascend A2 simulator (src/sim)"
    results["machine_description"] = machine.name
    n = args.ascend_size
    a = np.zeros((n, n), np.float16)
    b = np.zeros((n, n), np.float16)

    def build(cfg):
        return gemm_expert.matmul.get_tir(n, n, n, cfg["block_M"], cfg["block_N"], cfg["K_L1"],
                                          core_num=cfg["core_num"])

    def measure(cfg, f):
        t = time.time()
        kern = tilelang.compile(f, out_idx=[-1], target="ascend")
        cs = time.time() - t
        t = time.time()
        kern(a, b)
        ms = kern.info()["simulated_ms"]
        return ms, cs, time.time() - t, {"tflops": 2.0 * n ** 3 / ms / 1e9}

    results["workloads"].append(run_workload(f"ascend gemm_v0 fp16 {n}^3 (A2 simulator)", ASCEND_CONFIGS, build,
                                             measure, machine, deadline))
    flush()
    if args.autotune and not deadline.passed():
        results["autotune"].append(autotune_end_to_end(
            f"ascend gemm_v0 fp16 {n}^3", lambda block_M, block_N, K_L1, core_num: gemm_expert.matmul.get_tir(
                n, n, n, block_M, block_N, K_L1, core_num=core_num), ASCEND_CONFIGS, "ascend", warmup=0, rep=0,
            sweep=results["workloads"][-1]))
        flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=["cuda", "cuda-compile", "cpu", "ascend", "all"], default="cuda",
                    help="cuda-compile: no device; time the cuda compile pipeline and the tuner's compile phase")
    ap.add_argument("--out", required=True, help="JSON output path")
    ap.add_argument("--deadline", type=float, default=0, help="seconds after which no new config starts")
    ap.add_argument("--gemm-shapes", type=int, default=len(GEMM_SHAPES), help="how many GEMM shapes (cuda)")
    ap.add_argument("--workloads", default="gemm,flash", help="cuda: comma-separated subset of gemm,flash")
    ap.add_argument("--flash-shape", type=int, nargs=4, default=[8, 16, 4096, 128], metavar=("B", "H", "S", "D"))
    ap.add_argument("--cpu-size", type=int, default=1024)
    ap.add_argument("--cpu-seconds", type=float, default=60,
                    help="cpu: time spent in interleaved timing rounds (at least --cpu-min-rounds)")
    ap.add_argument("--cpu-min-rounds", type=int, default=7)
    ap.add_argument("--cpu-max-rounds", type=int, default=60)
    ap.add_argument("--cpu-calls", type=int, default=3, help="cpu: timed calls per configuration per round")
    ap.add_argument("--ascend-size", type=int, default=2048)
    ap.add_argument("--phases-only", action="store_true",
                    help="cuda-compile: only the tuner's compile phase (top_k=3 and exhaustive, alternating)")
    ap.add_argument("--phase-rounds", type=int, default=2, help="cuda-compile --phases-only: rounds of the modes")
    ap.add_argument("--phase-modes", default="3,ex",
                    help="cuda-compile --phases-only: comma-separated top_k values, 'ex' for exhaustive")
    ap.add_argument("--no-autotune", dest="autotune", action="store_false",
                    help="skip the end-to-end tilelang.autotune runs (exhaustive vs top_k=3, fresh caches)")
    args = ap.parse_args()
    deadline = Deadline(args.deadline)
    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "host": platform.node(),
               "cpu": platform.processor() or platform.machine(), "target": args.target, "workloads": [],
               "autotune": []}

    def flush():
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1, default=str)
        os.replace(tmp, args.out)

    targets = ["cpu", "ascend", "cuda"] if args.target == "all" else [args.target]
    for t in targets:
        try:
            {"cuda": cuda_workloads, "cuda-compile": cuda_compile_only, "cpu": cpu_workloads,
             "ascend": ascend_workloads}[t](args, deadline, results,
                                                                                             flush)
        except Exception as e:  # noqa: BLE001
            results.setdefault("errors", []).append(f"{t}: {type(e).__name__}: {e}")
            log(f"{t} workloads failed: {type(e).__name__}: {e}")
            traceback.print_exc()
    results["wall_s"] = time.time() - T0
    flush()
    log(f"wrote {args.out}")
    for w in results["workloads"]:
        s = w["summary"]
        if "spearman" in s:
            log(f"{s['workload']}: spearman {s['spearman']:.3f}, est-best/measured-best "
                f"{s['estimated_best_over_measured_best']:.3f}, top-3 best/measured-best "
                f"{s['top_k_best_over_measured_best']:.3f}, tuning speed-up {s['tuning_speedup']:.1f}x")
    ok = all("spearman" in w["summary"] for w in results["workloads"])
    return 0 if ok and (results["workloads"] or results.get("compile_only")) and not results.get("errors") else 1


if __name__ == "__main__":
    sys.exit(main())
