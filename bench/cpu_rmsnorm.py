"""cpu RMSNorm: examples/rms_norm's kernel (the element type a parameter) compiled for cpu, against
torch's cpu `torch.nn.functional.rms_norm` in the same dtype and process (issue 17, item 5).

  shapes: rows x hidden = 4096 x 4096 (prefill), 32 x 8192 (decode), 16384 x 1024;
  dtypes bfloat16 and float32 (statistics in float32 for both, as the example computes them).

  python bench/cpu_rmsnorm.py [--threads 2] [--rounds 5] [--timer thread_cpu --threads 1]
      [--only bfloat16|float32] [--shapes M,N ...] [--block-m 4]
      [--old-config KEY=VALUE | --old-env NAME=VALUE | --old-include DIR]  (a second build, timed beside)

The same kernel compiled with tl.disable_cpu_loop_fusion (one loop nest per tile statement) is timed
in the same interleaved rounds ("unfused"; "fusion gain" = unfused time / ours).

Both results are checked against numpy in float64 first (relative error bound per dtype). Ratios are
medians of per-round paired time ratios (bench/common.py); GB/s counts the bytes of X read and Y
written. Results: bench/results/cpu_rmsnorm.json (cpu_rmsnorm_1t_cputime.json with --timer
thread_cpu; a partial run adds _subset).
"""
import argparse
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (first: re-executes without peer-slowing variables before numpy loads)

import numpy as np  # noqa: E402

import tilelang  # noqa: E402

SHAPES = [(4096, 4096), (32, 8192), (16384, 1024)]
EPS = 1e-6


def load_example():
    path = os.path.join(common.ROOT, "examples", "rms_norm", "example_rms_norm.py")
    spec = importlib.util.spec_from_file_location("example_rms_norm", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    return ex


def main(threads=2, rounds=5, rep=20, timer="wall", dtypes=("bfloat16", "float32"), shapes=None, block_m=4,
         old=None):
    import ml_dtypes
    import torch
    torch.set_num_threads(threads)
    if timer == "thread_cpu" and threads != 1:
        raise ValueError("--timer thread_cpu needs --threads 1")
    ex = load_example()
    name = "cpu_rmsnorm" if timer == "wall" else "cpu_rmsnorm_1t_cputime"
    if old:
        name += "_ab"
    elif tuple(dtypes) != ("bfloat16", "float32") or shapes or block_m != 4:
        name += "_subset"  # a partial run does not replace the full run's results
    what = "wall clock" if timer == "wall" else "thread CPU time"
    table = common.Table(name, f"cpu RMSNorm, {threads} thread{'s' if threads > 1 else ''}, {what} "
                         "(GB/s; ratio = ours / torch rms_norm, same process)",
                         ["workload", "ours GB/s", "torch GB/s", "vs torch", "unfused GB/s", "fusion gain"]
                         + (["old build GB/s", "vs old"] if old else []))
    rng = np.random.default_rng(0)
    for (m, n) in (shapes or SHAPES):
        for dtype in dtypes:
            npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
            tdt = torch.bfloat16 if dtype == "bfloat16" else torch.float32
            # rows of varied scale, as the example's own check draws them
            x = (rng.standard_normal((m, n)) * rng.uniform(0.1, 10, (m, 1))).astype(np.float32).astype(npdt)
            w = rng.uniform(0.5, 1.5, n).astype(np.float32).astype(npdt)
            tx, tw = torch.from_numpy(x.astype(np.float32)).to(tdt), torch.from_numpy(w.astype(np.float32)).to(tdt)
            label = f"{dtype} {m}x{n}"
            kernel = tilelang.compile(ex.rms_norm(m, n, block_M=block_m, eps=EPS, dtype=dtype), target="cpu",
                                      pass_configs={"tl.cpu_num_threads": threads})
            unfused = tilelang.compile(ex.rms_norm(m, n, block_M=block_m, eps=EPS, dtype=dtype), target="cpu",
                                       pass_configs={"tl.cpu_num_threads": threads,
                                                     "tl.disable_cpu_loop_fusion": True})
            old_kernel = None
            if old:  # the same program built the other way (the cache keys on headers, flags and configs)
                with common.environment(old[0]):
                    old_kernel = tilelang.compile(ex.rms_norm(m, n, block_M=block_m, eps=EPS, dtype=dtype),
                                                  target="cpu", pass_configs={"tl.cpu_num_threads": threads, **old[1]})
            y = np.empty((m, n), npdt)
            y2 = np.empty((m, n), npdt)
            y3 = np.empty((m, n), npdt)
            kernel(x, w, y)
            unfused(x, w, y2)
            if old_kernel is not None:
                old_kernel(x, w, y3)
            ref = ex.reference(x, w, EPS)
            tol = 1e-2 if dtype == "bfloat16" else 1e-5
            peer = torch.nn.functional.rms_norm(tx, (n,), tw, EPS)
            outs = [("ours", y), ("unfused", y2), ("torch", peer.float().numpy())] + ([("old", y3)] if old else [])
            for who, out in ((who, out.astype(np.float64)) for who, out in outs):
                err = np.abs(out - ref).max() / np.abs(ref).max()
                if not err < tol:
                    raise AssertionError(f"{label} ({who}): relative error {err:.2e} exceeds {tol:.0e}")
            fns = {"ours": lambda: kernel(x, w, y), "unfused": lambda: unfused(x, w, y2),
                   "torch": lambda: torch.nn.functional.rms_norm(tx, (n,), tw, EPS)}
            if old_kernel is not None:
                fns["old"] = lambda: old_kernel(x, w, y3)
            ms = common.interleaved(fns, rounds=rounds, warmup=3, rep=rep, timer=timer)
            nbytes = 2 * m * n * np.dtype(npdt).itemsize
            ratio = round(ms.ratio("torch", "ours"), 3)
            gain = round(ms.ratio("unfused", "ours"), 3)
            vs_old = round(ms.ratio("old", "ours"), 3) if old else None
            table.add(label, common.gbps(nbytes, ms["ours"]), common.gbps(nbytes, ms["torch"]), ratio,
                      common.gbps(nbytes, ms["unfused"]), gain,
                      *([common.gbps(nbytes, ms["old"]), vs_old] if old else []))
            print(f"  {label}: ours {common.gbps(nbytes, ms['ours']):.1f}, torch {common.gbps(nbytes, ms['torch']):.1f}"
                  f", unfused {common.gbps(nbytes, ms['unfused']):.1f} GB/s; vs torch {ratio}, fusion gain {gain}"
                  + (f", old {common.gbps(nbytes, ms['old']):.1f} GB/s, vs old {vs_old}" if old else ""), flush=True)
    m = common.machine()
    table.note(f"torch {torch.__version__} nn.functional.rms_norm (cpu), eps {EPS}; ours examples/rms_norm, "
               f"block_M {block_m}")
    table.note(f"GB/s from median {what} per call (X read + Y written); ratio = median over rounds of paired "
               f"time ratios; {threads} thread(s) for ours (tl.cpu_num_threads) and torch")
    table.note(f"{m['cpu']}; load average at the end {m['load_average']:.1f}")
    placement = common.placement_note(threads)  # threads sharing a core: say so
    if placement:
        table.note(placement)
    table.finish()
    return table


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    common.add_cpu_timing_args(ap, rounds=5, rep=20)
    ap.add_argument("--only", nargs="+", choices=["bfloat16", "float32"], default=["bfloat16", "float32"])
    ap.add_argument("--shapes", nargs="+", default=None, metavar="M,N")
    ap.add_argument("--block-m", type=int, default=4)
    common.add_old_build_args(ap)  # column 'vs old' = old time / ours
    args = ap.parse_args()
    main(threads=args.threads, rounds=args.rounds, rep=args.rep, timer=args.timer, dtypes=tuple(args.only),
         shapes=[tuple(int(x) for x in s.split(",")) for s in args.shapes] if args.shapes else None,
         block_m=args.block_m, old=common.old_build(args))
