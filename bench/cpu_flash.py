"""cpu flash-attention forward: the TileLang flash-attention kernel (examples/flash_attention, with
the element type as a parameter) compiled for cpu, against torch's cpu
scaled_dot_product_attention in the same dtype and process (issue 17, item 5).

  shapes: [batch, heads, seq_len, dim] = [1, 8, 2048, 128] and [1, 16, 2048, 64], causal and not;
  dtypes bfloat16 (T.gemm on AMX tiles where the CPU has them) and float32; blocks: the cpu
  configuration CPU_CONFIG below (bf16 128 x 128, fp32 128 x 64), the example's with --blocks 64,64.

  python bench/cpu_flash.py [--threads 2] [--rounds 3] [--timer thread_cpu --threads 1]
      [--only bfloat16|float32] [--shapes B,H,S,D ...] [--blocks M,N] [--causal no|yes]
      [--old-include DIR] [--old-env NAME=VALUE] [--old-config KEY=VALUE]   (also the same kernels
      built another way — an earlier tree's headers, a build-time variable such as
      TL_CPU_VECTOR_WIDTH=256, extra pass configs — and timed in the same rounds)

Both results are checked against numpy in float64 first (relative error bound per dtype). Ratios
are medians of per-round paired time ratios (bench/common.py). Results: bench/results/cpu_flash.json
(cpu_flash_1t_cputime.json with --timer thread_cpu; a partial run adds _subset, an A/B run _ab).
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (first: re-executes without peer-slowing variables before numpy loads)

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

# (batch, heads, seq_len, dim)
SHAPES = [(1, 8, 2048, 128), (1, 16, 2048, 64)]
# block_M x block_N: the example's are 64 x 64 (--blocks 64,64); the cpu configuration, like
# bench/cpu_gemm.py's CPU_CONFIG, takes larger blocks (fewer, larger GEMM calls per KV step; measured
# with bench/cpu_flash_phases on the AMX Xeon, twelfth session: bf16 384 against 296 GFLOP/s at 64 x 64,
# fp32 120 against 118; on the Zen 4 core bf16 174 against 166, fp32 equal; docs/PERFORMANCE.md).
EXAMPLE_BLOCKS = (64, 64)
CPU_CONFIG = {"bfloat16": (128, 128), "float16": (128, 128), "float32": (128, 64)}


def flashattn(batch, heads, seq_len, dim, is_causal, block_M, block_N, dtype):
    """examples/flash_attention/example_flash_attention.py's kernel with `dtype` a parameter."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = (batch, heads, seq_len, dim)
    accum_dtype = "float32"

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            scores_max = T.alloc_fragment((block_M,), accum_dtype)
            scores_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            scores_scale = T.alloc_fragment((block_M,), accum_dtype)
            scores_sum = T.alloc_fragment((block_M,), accum_dtype)
            logsum = T.alloc_fragment((block_M,), accum_dtype)
            T.copy(Q[bz, by, bx * block_M, 0], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))
            loop_range = (T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                          if is_causal else T.ceildiv(seq_len, block_N))
            for k in T.Pipelined(loop_range, num_stages=1):
                T.copy(K[bz, by, k * block_N, 0], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
                                                     -T.infinity(accum_dtype))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(scores_max, scores_max_prev)
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, by, k * block_N, 0], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, by, bx * block_M, 0])

    return main


def reference(q, k, v, is_causal):
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if is_causal:
        seq = q.shape[2]
        scores = np.where(np.tril(np.ones((seq, seq), dtype=bool)), scores, -np.inf)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", scores / scores.sum(axis=-1, keepdims=True), v)


def attn_flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


def main(threads=2, rounds=3, rep=5, timer="wall", dtypes=("bfloat16", "float32"), shapes=None, blocks=None,
         causal_modes=(False, True), old=None):
    import ml_dtypes
    import torch
    torch.set_num_threads(threads)
    if timer == "thread_cpu" and threads != 1:
        raise ValueError("--timer thread_cpu needs --threads 1")
    name = "cpu_flash" if timer == "wall" else "cpu_flash_1t_cputime"
    if old:
        name += "_ab"
    elif tuple(dtypes) != ("bfloat16", "float32") or shapes or blocks is not None or len(causal_modes) != 2:
        name += "_subset"  # a partial run does not replace the full run's results
    what = "wall clock" if timer == "wall" else "thread CPU time"
    table = common.Table(name, f"cpu flash-attention forward, {threads} thread{'s' if threads > 1 else ''}, {what} "
                         "(GFLOP/s; ratio = ours / torch SDPA, same process)",
                         ["workload", "ours GFLOP/s", "torch SDPA GFLOP/s", "vs torch"] +
                         (["old build GFLOP/s", "vs old", "old vs torch"] if old else []))
    rng = np.random.default_rng(0)
    for (b, h, s, d) in (shapes or SHAPES):
        for dtype in dtypes:
            npdt = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}.get(dtype, np.float32)
            tdt = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(dtype, torch.float32)
            q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32).astype(npdt) for _ in range(3))
            tq, tk, tv = (torch.from_numpy(x.astype(np.float32)).to(tdt) for x in (q, k, v))
            for causal in causal_modes:
                label = f"{dtype} B{b} H{h} S{s} D{d}{' causal' if causal else ''}"
                prog = flashattn(b, h, s, d, causal, *(blocks or CPU_CONFIG[dtype]), dtype)
                kernel = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_num_threads": threads})
                o = np.empty((b, h, s, d), npdt)
                kernel(q, k, v, o)
                outs = [("ours", o)]
                if old:  # the same program built the other way (the cache keys on headers and flags)
                    with common.environment(old[0]):
                        old_kernel = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_num_threads": threads,
                                                                                        **old[1]})
                    o_old = np.empty((b, h, s, d), npdt)
                    old_kernel(q, k, v, o_old)
                    outs.append(("old build", o_old))
                ref = reference(q, k, v, causal)
                tol = 1e-4 if dtype == "float32" else 2e-2
                for who, out in outs + [("torch", torch.nn.functional.scaled_dot_product_attention(
                        tq, tk, tv, is_causal=causal).float().numpy())]:
                    err = np.abs(out.astype(np.float64) - ref).max() / np.abs(ref).max()
                    if not err < tol:
                        raise AssertionError(f"{label} ({who}): relative error {err:.2e} exceeds {tol:.0e}")
                fns = {"ours": lambda: kernel(q, k, v, o),
                       "torch": lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)}
                if old:
                    fns["old"] = lambda: old_kernel(q, k, v, o_old)
                ms = common.interleaved(fns, rounds=rounds, warmup=2, rep=rep, timer=timer)
                fl = attn_flops(b, h, s, d, causal)
                ratio = round(ms.ratio("torch", "ours"), 3)
                row = [label, common.gflops(fl, ms["ours"]), common.gflops(fl, ms["torch"]), ratio]
                extra = ""
                if old:
                    row += [common.gflops(fl, ms["old"]), round(ms.ratio("old", "ours"), 3),
                            round(ms.ratio("torch", "old"), 3)]
                    extra = f"; old build {row[4]:.1f}, ours/old {row[5]}, old vs torch {row[6]}"
                table.add(*row)
                print(f"  {label}: ours {common.gflops(fl, ms['ours']):.1f}, torch {common.gflops(fl, ms['torch']):.1f}"
                      f" GFLOP/s; vs torch {ratio}{extra}", flush=True)
    m = common.machine()
    if old:
        table.note("old build: " + " ".join(f"{k}={v}" for k, v in {**old[0], **old[1]}.items()))
    table.note(f"torch {torch.__version__} scaled_dot_product_attention (cpu); blocks "
               f"{'x'.join(map(str, blocks)) if blocks else ', '.join(f'{t} ' + 'x'.join(map(str, b)) for t, b in CPU_CONFIG.items())}; "
               f"GFLOP/s count 4*B*H*S^2*D (half when causal)")
    table.note(f"GFLOP/s from median {what} per call; ratio = median over rounds of paired time ratios; "
               f"{threads} thread(s) for ours (tl.cpu_num_threads) and torch")
    table.note(f"{m['cpu']}; load average at the end {m['load_average']:.1f}")
    placement = common.placement_note(threads)  # threads sharing a core: say so
    if placement:
        table.note(placement)
    table.finish()
    return table


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    common.add_cpu_timing_args(ap, rounds=3, rep=5)
    ap.add_argument("--only", nargs="+", choices=["bfloat16", "float16", "float32"], default=["bfloat16", "float32"],
                    help="element types to run")
    ap.add_argument("--shapes", nargs="+", default=None, metavar="B,H,S,D",
                    help="shapes to run (default: " + " ".join(",".join(map(str, x)) for x in SHAPES) + ")")
    ap.add_argument("--blocks", default=None, metavar="M,N",
                    help="block_M,block_N for every dtype (default: CPU_CONFIG; the example's: 64,64)")
    ap.add_argument("--causal", choices=["both", "no", "yes"], default="both")
    common.add_old_build_args(ap)
    args = ap.parse_args()
    main(threads=args.threads, rounds=args.rounds, rep=args.rep, timer=args.timer, dtypes=tuple(args.only),
         shapes=[tuple(int(x) for x in s.split(",")) for s in args.shapes] if args.shapes else None,
         blocks=tuple(int(x) for x in args.blocks.split(",")) if args.blocks else None,
         causal_modes={"both": (False, True), "no": (False,), "yes": (True,)}[args.causal],
         old=common.old_build(args))
