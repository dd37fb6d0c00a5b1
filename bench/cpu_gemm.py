"""cpu GEMM: the TileLang tiled GEMM (T.copy into shared tiles, T.gemm on tiles, T.Pipelined over K)
compiled for cpu, against numpy (OpenBLAS) and torch.matmul (MKL for fp32, oneDNN for bf16) in the
same process, with the peers at full speed:

  - the process has none of the variables that slow a peer (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE,
    MKL/oneDNN ISA caps: bench/common.py re-executes the script without them);
  - each peer's kernel is recorded (threadpoolctl's OpenBLAS `architecture`; MKL's and oneDNN's
    verbose lines from a probe process), with the CPU model and its ISA features;
  - a ratio against a peer whose kernels are of an older core type than the CPU supports is refused
    (the cell says why), never printed.

  shapes: fp32 square 2048^3 (and 1024^3), tall-skinny M=8192 N=256 K=2048, decode M=16 N=K=4096
  (and M=1); bf16 A, B with fp32 C, and with bf16 C (TileLang's GEMM example: one rounding of the
  fp32 accumulator at the copy-out, what torch.matmul in bf16 returns), at 2048^3 against
  torch.matmul in bf16 (oneDNN); fp16 A, B with fp32 C and with fp16 C at 2048^3 against OpenBLAS
  sgemm on the same values in fp32 (numpy column) and torch.matmul in fp16 (oneDNN, refused unless
  it runs the CPU's fp16 units: common.f16_peer_refusal); int8 A, B with
  int32 C at 2048^3 against oneDNN's int8 matmul through torch's quantized linear on the onednn
  engine (u8 x s8 with int32 accumulation, requantized to u8; its weights are packed once, when
  set). torch._int_mm (s8 x s8 -> s32) goes through oneDNN's gemm API, whose kernel names no AMX:
  refused on an AMX-INT8 CPU, so not timed there.

  python bench/cpu_gemm.py [--threads 2] [--rounds 5] [--quick] [--old-include DIR] [--old-env NAME=VALUE]

The block configuration is the cpu one documented in docs/PERFORMANCE.md (CPU_CONFIG below): the
kernel source is TileLang's, only block_M / block_N / block_K differ from the GPU examples.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (first: re-executes without peer-slowing variables before numpy loads)

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

# block_M, block_N, block_K for cpu (a sweep on this machine: 128x128x32 (the GPU examples' tiles)
# reaches ~1.25x numpy at 2048, 128..256 x 256 x 64..128 ~1.5-1.7x): a 256 x 256 fp32 C tile (256 KiB,
# on the heap, in L2) amortizes the copies of A and B tiles over twice the work of a 128-row tile,
# B_shared rows are 4 micro-kernel strips wide, and 64 (bf16: 128) k per step keeps a micro-kernel
# strip of B in L1. 2048 / 256 squared = 64 blocks for 2 workers. T.use_swizzle(panel_size=4), as in
# TileLang's GEMM examples, groups the block order by 4 rows of tiles (their A tiles stay in L3).
# bf16 (AMX): 512 x 512 x 256 (a sweep against oneDNN in one process, 2026-11-26: 256x256x128 0.50x,
# 256x256x512 0.60x, 512x256x256 0.65x, 512x512x256 0.70x on one thread): the GEMM packs B per call
# and A per 32-row block, so bigger blocks re-read the operands fewer times; 256 k per call keep
# the packed B slice (256 KiB) in L2 and the C tiles in AMX registers over 8 tile steps.
# int8 (AMX tdpbssd, int32 C): the same blocks with 512 k per call (8 tile steps of 64).
# fp16 (AMX through two bfloat16 per value, or float32 multiply-adds): bf16's blocks.
CPU_CONFIG = {"float32": (512, 512, 64), "bfloat16": (512, 512, 256), "float16": (512, 512, 256),
              "int8": (512, 512, 512)}

EXAMPLE_BLOCKS = (128, 128, 32)  # TileLang's examples/gemm blocks for a GPU

# (label, M, N, K, (block_M, block_N, block_K), dtype)
# fp32 (2026-11-27): the k loop of this kernel becomes one GEMM over all of k (forward_gemm_operands),
# so block_K no longer sets the GEMM's depth; 512 x 512 blocks re-read A and B half as often as
# 256 x 256 ones (paired, one thread: 1.09x at 2048^3), and a decode row of 2048 columns lets the
# GEMV read rows of B front to back (1.1-1.3x against 256-column strips; 2048 against 1024 columns
# 1.04-1.05x on a Zen 4 and an Emerald Rapids core, fourteenth session) in two blocks (two threads).
SHAPES = [
    ("fp32 2048^3", 2048, 2048, 2048, (512, 512, 64), "float32"),
    ("fp32 1024^3", 1024, 1024, 1024, (512, 512, 64), "float32"),
    ("fp32 tall-skinny 8192x256x2048", 8192, 256, 2048, (512, 256, 64), "float32"),
    ("fp32 decode 16x4096x4096", 16, 4096, 4096, (16, 256, 64), "float32"),
    ("fp32 decode 1x4096x4096", 1, 4096, 4096, (1, 2048, 256), "float32"),
    ("bf16 2048^3 (fp32 acc)", 2048, 2048, 2048, CPU_CONFIG["bfloat16"], "bfloat16"),
    # TileLang's GEMM example writes C in the input dtype (float32 accumulator, one rounding at the
    # copy-out), as torch.matmul on bfloat16 does: the like-for-like row against oneDNN.
    ("bf16 2048^3 (fp32 acc, bf16 C)", 2048, 2048, 2048, CPU_CONFIG["bfloat16"], "bfloat16", "bfloat16"),
    # fp16: numpy's column is OpenBLAS sgemm on the same values in float32 (numpy has no fp16 GEMM
    # of its own speed); torch's is torch.matmul on float16 (oneDNN; refused unless it runs the
    # CPU's float16 units, common.f16_peer_refusal), float16 C as it returns.
    ("fp16 2048^3 (fp32 acc)", 2048, 2048, 2048, CPU_CONFIG["float16"], "float16"),
    ("fp16 2048^3 (fp32 acc, fp16 C)", 2048, 2048, 2048, CPU_CONFIG["float16"], "float16", "float16"),
    ("int8 2048^3 (int32 acc)", 2048, 2048, 2048, CPU_CONFIG["int8"], "int8"),
    # TileLang's GEMM example unchanged: its GPU blocks (128 x 128 x 32), C in the input dtype. The k
    # loop of 32-deep GEMMs becomes one GEMM over all of k (forward_gemm_operands' k-loop fusion).
    # (coarsen_gemm_blocks then runs neighbouring blocks as one of up to 512 x 512.)
    ("fp32 2048^3 example blocks", 2048, 2048, 2048, EXAMPLE_BLOCKS, "float32"),
    ("fp16 2048^3 example blocks (fp16 C)", 2048, 2048, 2048, EXAMPLE_BLOCKS, "float16", "float16"),
    ("bf16 2048^3 example blocks (bf16 C)", 2048, 2048, 2048, EXAMPLE_BLOCKS, "bfloat16", "bfloat16"),
    ("int8 2048^3 example blocks (int32 acc)", 2048, 2048, 2048, EXAMPLE_BLOCKS, "int8"),
]
QUICK = ("fp32 2048^3", "fp32 tall-skinny 8192x256x2048", "fp32 decode 16x4096x4096", "bf16 2048^3 (fp32 acc)",
         "bf16 2048^3 (fp32 acc, bf16 C)", "int8 2048^3 (int32 acc)")


def matmul(M, N, K, block_M, block_N, block_K, dtype="float32", accum_dtype="float32", out_dtype=None):
    """TileLang's tiled GEMM example; M, N, K need not be multiples of the blocks. C is out_dtype
    (default: the accumulator's)."""
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), out_dtype or accum_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(panel_size=4)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm


def check(c, a, b, what, rtol):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c - ref).max() / max(np.abs(ref).max(), 1e-30)
    if not err < rtol:
        raise AssertionError(f"{what}: relative error {err:.2e} exceeds {rtol:.0e}")
    return err


def ratio_cell(ms, peer, refusal):
    """The paired ratio ours vs `peer`, or the refusal (a peer below its speed flatters us)."""
    if refusal:
        return f"refused: {refusal}"
    return round(ms.ratio(peer, "ours"), 3)


def int8_row(kernel, M, N, K, rng, rounds, rep, timer, refusal, old_kernel=None, label=None):
    """ours (int8 A, B; int32 C, exact) against oneDNN's int8 matmul (torch quantized linear, onednn
    engine): GOP/s ours, numpy (none), ratio, peer, ratio; and the old build's GOP/s and ratio (or blanks)."""
    import torch
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.empty((M, N), np.int32)
    kernel(a, b, c)
    if not np.array_equal(c.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64)):
        raise AssertionError("int8 GEMM (ours) differs from numpy's int64 product")
    fns = {"ours": lambda: kernel(a, b, c)}
    if old_kernel is not None:
        c_old = np.empty_like(c)
        old_kernel(a, b, c_old)
        if not np.array_equal(c_old, c):
            raise AssertionError("int8 GEMM (old build) differs from ours")
        fns["old"] = lambda: old_kernel(a, b, c_old)
    try:
        torch.backends.quantized.engine = "onednn"
        ql = torch.ao.nn.quantized.Linear(K, N, bias_=False)
        ql.set_weight_bias(torch.quantize_per_tensor(torch.from_numpy(b.T.astype(np.float32) * 0.01), 0.01, 0,
                                                     torch.qint8), None)
        xq = torch.quantize_per_tensor(torch.from_numpy((a.astype(np.float32) + 128) * 0.02), 0.02, 0, torch.quint8)
        ql(xq)
        fns["torch"] = lambda: ql(xq)
    except Exception as e:  # no quantized engine: no peer
        refusal = f"no oneDNN int8 matmul in torch ({e})"
    ms = common.interleaved(fns, rounds=rounds, warmup=3 if timer != "wall" else 5, rep=rep, timer=timer)
    ops = 2.0 * M * N * K
    vs_t = ratio_cell(ms, "torch", refusal) if "torch" in ms else f"refused: {refusal}"
    peer = common.gflops(ops, ms["torch"]) if "torch" in ms else ""
    olds = f", old {common.gflops(ops, ms['old']):.1f}" if "old" in ms else ""
    peer_rate = f"{peer:.1f}" if peer != "" else "n/a"
    print(f"  {label or f'int8 {M}x{N}x{K}'}: ours {common.gflops(ops, ms['ours']):.1f}{olds}, oneDNN {peer_rate} GOP/s; "
          f"vs torch {vs_t}", flush=True)
    old_cells = [common.gflops(ops, ms["old"]), round(ms.ratio("old", "ours"), 3)] if "old" in ms else ["", ""]
    return (common.gflops(ops, ms["ours"]), "", "n/a (numpy has no int8 GEMM)", peer, vs_t), old_cells


def main(threads=2, rounds=5, quick=False, rep=30, timer="wall", only=None, old=None):
    import ml_dtypes
    try:
        import threadpoolctl
        _limits = threadpoolctl.threadpool_limits(limits=threads, user_api="blas")  # noqa: F841 (kept alive)
    except ImportError:  # numpy's OpenBLAS then uses every core (2 on the build VM)
        pass
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    cpu_level = common.cpu_vector_level()
    flags = common.cpu_flags()
    ob = common.openblas_peer()
    tp = common.torch_peer() if torch is not None else None
    np_refusal = common.fp32_peer_refusal(ob["level"], cpu_level)
    torch_refusal = common.fp32_peer_refusal(tp["fp32_level"], cpu_level) if tp else "torch not installed"
    bf16_refusal = common.bf16_peer_refusal(tp["bf16_impl"], flags) if tp else "torch not installed"
    int8_refusal = common.int8_peer_refusal(tp["qlinear_impl"], flags) if tp else "torch not installed"
    f16_refusal = common.f16_peer_refusal(tp.get("f16_impl"), flags) if tp else "torch not installed"
    if timer == "thread_cpu" and threads != 1:
        raise ValueError("--timer thread_cpu needs --threads 1 (every contender computes on the calling thread)")
    name = "cpu_gemm" if timer == "wall" else "cpu_gemm_1t_cputime"
    what = "wall clock" if timer == "wall" else "thread CPU time"
    table = common.Table(name, f"cpu GEMM, {threads} thread{'s' if threads > 1 else ''}, {what} (GFLOP/s, int8: GOP/s; "
                         "ratio = ours / peer, same process)",
                         ["workload", "config", "ours GFLOP/s", "numpy GFLOP/s", "vs numpy", "torch GFLOP/s",
                          "vs torch"] + (["old build GFLOP/s", "vs old"] if old else []))
    rng = np.random.default_rng(0)
    fma = common.fma_probe()
    peaks = [common.fp32_fma_peak(lib=fma)] if fma else []  # one core's fp32 FMA peak, before and after the rows
    of_peak = []  # fp32 rows: (label, {contender: GFLOP/s})
    for label, M, N, K, (bm, bn, bk), dtype, *out in SHAPES:
        if (quick and label not in QUICK) or (only and not any(o in label for o in only)):
            continue
        acc = "int32" if dtype == "int8" else "float32"
        out_dtype = out[0] if out else acc
        kernel = tilelang.compile(matmul(M, N, K, bm, bn, bk, dtype=dtype, accum_dtype=acc, out_dtype=out_dtype),
                                  target="cpu",
                                  pass_configs={"tl.cpu_num_threads": threads})
        old_kernel = None
        if old:  # the same program built the other way (the cache keys on headers and flags)
            # (headers older than the packed-B reuse need --old-config tl.disable_cpu_gemm_pack_reuse=true)
            build_configs = {"tl.cpu_num_threads": threads, **old[1]}
            with common.environment(old[0]):
                old_kernel = tilelang.compile(matmul(M, N, K, bm, bn, bk, dtype=dtype, accum_dtype=acc,
                                                     out_dtype=out_dtype), target="cpu", pass_configs=build_configs)
        if dtype == "int8":
            cells, old_cells = int8_row(kernel, M, N, K, rng, rounds, rep, timer, int8_refusal, old_kernel, label)
            table.add(label, f"{bm}x{bn}x{bk}", *cells, *(old_cells if old else []))
            continue
        a32 = rng.standard_normal((M, K), dtype=np.float32)
        b32 = rng.standard_normal((K, N), dtype=np.float32)
        narrow = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}.get(dtype)
        if narrow is not None:
            a, b = a32.astype(narrow), b32.astype(narrow)
            a32, b32 = a.astype(np.float32), b.astype(np.float32)
        else:
            a, b = a32, b32
        c = np.empty((M, N), {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}.get(out_dtype, np.float32))
        kernel(a, b, c)
        # float32 C: float32 accumulation error only; bfloat16 / float16 C: plus one rounding
        check(c.astype(np.float32), a32, b32, f"{label} (ours)", 1e-5 if out_dtype == "float32" else 1e-2)
        fns = {"ours": lambda: kernel(a, b, c)}
        if old_kernel is not None:
            c_old = np.empty_like(c)
            old_kernel(a, b, c_old)
            check(c_old.astype(np.float32), a32, b32, f"{label} (old build)", 1e-5 if out_dtype == "float32" else 1e-2)
            fns["old"] = lambda: old_kernel(a, b, c_old)
        c_np = np.empty((M, N), np.float32)
        if dtype == "float32":
            fns["numpy"] = lambda: np.matmul(a, b, out=c_np)
        if dtype == "float16":  # OpenBLAS sgemm on the same values
            fns["numpy"] = lambda: np.matmul(a32, b32, out=c_np)
        # a refused fp16 peer is not timed at all: outside oneDNN (the Zen 4 build machine) torch's fp16
        # matmul runs at 0.4 GFLOP/s, 40 s a call at 2048^3
        if torch is not None and not (dtype == "float16" and f16_refusal):
            if dtype == "float32":
                ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c_np.copy())
                fns["torch"] = lambda: torch.matmul(ta, tb, out=tc)
            else:  # bf16 (fp16) in, bf16 (fp16) out (no torch matmul returns fp32 here); fp32 accumulation inside
                to = torch.bfloat16 if dtype == "bfloat16" else torch.float16
                ta, tb = torch.from_numpy(a32).to(to), torch.from_numpy(b32).to(to)
                tc = torch.matmul(ta, tb)
                check(tc.float().numpy(), a32, b32, f"{label} (torch)", 1e-2)
                fns["torch"] = lambda: torch.matmul(ta, tb, out=tc)
        ms = common.interleaved(fns, rounds=rounds, warmup=3 if timer != "wall" else 5, rep=rep, timer=timer)
        flops = 2.0 * M * N * K
        gf = lambda name: common.gflops(flops, ms[name]) if name in ms else ""  # noqa: E731
        vs_np = ratio_cell(ms, "numpy", np_refusal) if "numpy" in ms else "n/a (numpy has no bf16 GEMM)"
        t_ref = {"bfloat16": bf16_refusal, "float16": f16_refusal}.get(dtype, torch_refusal)
        vs_t = ratio_cell(ms, "torch", t_ref) if "torch" in ms else (f"refused: {t_ref}" if t_ref else "n/a")
        table.add(label, f"{bm}x{bn}x{bk}", gf("ours"), gf("numpy"), vs_np, gf("torch"), vs_t,
                  *([gf("old"), round(ms.ratio("old", "ours"), 3) if "old" in ms else ""] if old else []))
        print(f"  {label}: " + ", ".join(f"{n} {gf(n):.1f}" for n in ms) + f" GFLOP/s; vs numpy {vs_np}, "
              f"vs torch {vs_t}", flush=True)
        if dtype == "float32":
            of_peak.append((label, {n: gf(n) for n in ("ours", "numpy", "torch") if n in ms}))
        if fma:
            peaks.append(common.fp32_fma_peak(lib=fma))
    if fma and len(peaks) > 1:
        peak = max(peaks) * threads
        spread = max(peaks) / min(peaks) - 1
        table.note(f"fp32 FMA peak of one core, probed in this process before the rows and after each: "
                   f"{min(peaks):.1f}-{max(peaks):.1f} GFLOP/s over {len(peaks)} probes "
                   f"(bench/cpu_fp32_ceiling/peak.cc; " +
                   (f"a {spread:.0%} spread: another tenant competed for the core, ratios are less reliable"
                    if spread > 0.1 else "steady") +
                   f"); fp32 rows as a fraction of {threads} x the highest: " +
                   "; ".join(f"{label} " + " / ".join(f"{n} {r / peak:.2f}" for n, r in rates.items())
                             for label, rates in of_peak))
    table.note(f"numpy peer: {ob.get('internal_api')} {ob.get('version')}, kernel '{ob.get('architecture')}' "
               f"({ob.get('level')} tier; from {ob.get('source')})")
    if tp:
        table.note(f"torch peer: torch {tp['version']} (ATen capability {tp['aten_capability']}); fp32: "
                   f"{tp.get('fp32_impl')} {tp['mkl']} ({tp['fp32_level']} tier); bf16: oneDNN {tp['bf16_impl']}; "
                   f"fp16: oneDNN {tp.get('f16_impl')} ({f16_refusal or 'usable'}); int8: oneDNN {tp.get('qlinear_impl')} (quantized linear, u8 x s8, weights packed once; "
                   f"torch._int_mm runs {tp.get('int8_mm_impl')}: {common.int8_peer_refusal(tp.get('int8_mm_impl'), flags) or 'usable'})")
    table.note(f"CPU fp32 tier {cpu_level}; ratios are refused against a peer of an older tier")
    m = common.machine()
    removed = m["peer_env_removed"]
    table.note("peer environment clean" + (f" (re-executed without {removed})" if removed else
                                          " (no OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE / ISA caps set)"))
    table.note(f"GFLOP/s from median {what} per call; ratio = median over rounds of the paired time ratios; "
               f"{threads} thread(s) for ours (tl.cpu_num_threads), OpenBLAS (threadpoolctl) and torch")
    table.note(f"{m['cpu']}; load average at the end {m['load_average']:.1f}")
    placement = common.placement_note(threads)  # threads sharing a core: say so
    if placement:
        table.note(placement)
    table.finish()
    return table


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    common.add_cpu_timing_args(ap, rounds=5, rep=30)
    ap.add_argument("--quick", action="store_true", help="only 2048^3, tall-skinny, decode M=16 and bf16")
    ap.add_argument("--only", nargs="*", help="only workloads whose label contains one of these")
    common.add_old_build_args(ap)  # fp32 / bf16 only; column 'vs old' = ours / old
    args = ap.parse_args()
    main(threads=args.threads, rounds=args.rounds, quick=args.quick, rep=args.rep, timer=args.timer, only=args.only,
         old=common.old_build(args))
