"""Size of the generated CUDA source and cold compile time (no GPU needed: compile only).

For representative kernels (those of bench/gpu_compile.py and the compile-only test set): bytes and
lines of kernel.cu, the cold compile (lower + codegen + NVRTC, what `tilelang.compile` pays on a
cache miss) and NVRTC alone, cubin bytes, registers and spills.

  python bench/cuda_codegen_size.py [--arch sm_90a] [--repeat 3] [--json file] [-k name]
  python bench/cuda_codegen_size.py --save DIR       # also write each kernel.cu to DIR
  python bench/cuda_codegen_size.py --against DIR    # A/B: NVRTC on DIR's sources (another build's
                                                     # --save) and on this build's, interleaved

Timings are the minimum over --repeat runs on this machine; with --against both sides are timed
in alternation in one process, so load from other processes affects both alike.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python", "cuda"))

import cuda_kernels as K  # noqa: E402
from tilelang import _core  # noqa: E402


def kernels():
    ks = {
        "gemm_f16_4096": K.matmul(4096, 4096, 4096, 128, 256, 64, threads=256, swizzle_panel=8),
        "flash_fwd_d128": K.flashattn(8, 16, 4096, 128, True, block_M=128, block_N=128, threads=256),
        "softmax": K.softmax(32768, 4096, block_M=1),
        "rms_norm": K.rms_norm_rows(32768, 4096),
    }
    ks.update(K.all_kernels())
    return ks


def usage(r):
    return {
        "cubin_bytes": len(r["cubin"]),
        "registers": max(u["registers"] for u in r["usage"]),
        "spill_bytes": max(u["spill_store_bytes"] for u in r["usage"]),
        "stack_bytes": max(u["stack_frame_bytes"] for u in r["usage"]),
    }


def measure(f, arch, repeat):
    best_cold = best_nvrtc = None
    for _ in range(repeat):
        t = time.perf_counter()
        r = _core.cuda.build_func(f.ir, arch, {}, [])
        cold = time.perf_counter() - t
        best_cold = cold if best_cold is None else min(best_cold, cold)
        best_nvrtc = r["seconds"] if best_nvrtc is None else min(best_nvrtc, r["seconds"])
    src = r["source"]
    row = {"source_bytes": len(src.encode()), "source_lines": src.count("\n"),
           "cold_seconds": round(best_cold, 4), "nvrtc_seconds": round(best_nvrtc, 4)}
    row.update(usage(r))
    return row, src


def nvrtc_seconds(src, arch):
    r = _core.cuda.compile(src, name="kernel.cu", arch=arch)
    return r["seconds"], r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--save")
    ap.add_argument("--against")
    ap.add_argument("-k", default="")
    a = ap.parse_args()
    rows = {}
    if a.against:
        print(f"{'kernel':<18} {'bytes A':>8} {'bytes B':>8} {'nvrtc A':>8} {'nvrtc B':>8} {'regs A':>6} {'regs B':>6} "
              f"{'cubin A':>8} {'cubin B':>8}")
    else:
        print(f"{'kernel':<18} {'bytes':>8} {'lines':>6} {'cold s':>7} {'nvrtc s':>8} {'cubin':>8} {'regs':>5} "
              f"{'spill':>5}")
    for name, f in kernels().items():
        if a.k and a.k not in name:
            continue
        if a.against:
            old = open(os.path.join(a.against, name + ".cu")).read()
            new = _core.cuda.build_func(f.ir, a.arch, {}, [])["source"]
            ta, tb = [], []
            for _ in range(a.repeat):
                s, ra = nvrtc_seconds(old, a.arch)
                ta.append(s)
                s, rb = nvrtc_seconds(new, a.arch)
                tb.append(s)
            ua, ub = usage(ra), usage(rb)
            row = {"bytes_a": len(old.encode()), "bytes_b": len(new.encode()), "nvrtc_a": round(min(ta), 4),
                   "nvrtc_b": round(min(tb), 4), "registers_a": ua["registers"], "registers_b": ub["registers"],
                   "cubin_a": ua["cubin_bytes"], "cubin_b": ub["cubin_bytes"], "spill_b": ub["spill_bytes"]}
            rows[name] = row
            print(f"{name:<18} {row['bytes_a']:>8} {row['bytes_b']:>8} {row['nvrtc_a']:>8.3f} {row['nvrtc_b']:>8.3f} "
                  f"{row['registers_a']:>6} {row['registers_b']:>6} {row['cubin_a']:>8} {row['cubin_b']:>8}",
                  flush=True)
            continue
        m, src = measure(f, a.arch, a.repeat)
        if a.save:
            os.makedirs(a.save, exist_ok=True)
            with open(os.path.join(a.save, name + ".cu"), "w") as fh:
                fh.write(src)
        rows[name] = m
        print(f"{name:<18} {m['source_bytes']:>8} {m['source_lines']:>6} {m['cold_seconds']:>7.3f} "
              f"{m['nvrtc_seconds']:>8.3f} {m['cubin_bytes']:>8} {m['registers']:>5} {m['spill_bytes']:>5}", flush=True)
    keys = ("bytes_a", "bytes_b", "nvrtc_a", "nvrtc_b") if a.against else \
        ("source_bytes", "source_lines", "cold_seconds", "nvrtc_seconds")
    tot = {k: round(sum(r[k] for r in rows.values()), 4) for k in keys}
    print("total", tot)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"arch": a.arch, "kernels": rows, "total": tot}, fh, indent=1)


if __name__ == "__main__":
    main()
