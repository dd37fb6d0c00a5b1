"""How close the fp32 GEMMs run to one core's FMA peak: the bench kernel's 2048^3 block loop
(../cpu_amx_blockloop/variant.cc -DF32, the shipped header and any -D variants), the shipped
micro-kernel alone (micro_kernel.cc, B from L1 and from L2), numpy's OpenBLAS and torch's MKL, in one
process, one thread, interleaved single calls by thread CPU time, with the FMA peak probe (peak.cc) run
before every round. Per contender: the best and median GFLOP/s, the median over rounds of its rate
over that round's peak, and the paired ratio against torch. Used by the nineteenth session
(docs/PERFORMANCE.md) to show where the fp32 goal's 1.05x max(OpenBLAS, MKL) lies against the peak.
    taskset -c 2 python bench/cpu_fp32_ceiling/run.py [--rounds 21] [--variant NAME=-DFLAG ...]
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402

common.ensure_clean_peer_process()
import numpy as np  # noqa: E402

N = 2048
# the cpu target's kernel flags (src/target/cpu/codegen.cc) with -march=native for the host's ISA
FLAGS = ["-std=c++17", "-O2", "-march=native", "-ftree-vectorize", "-fvect-cost-model=dynamic", "-fno-math-errno",
         "-fno-trapping-math", "-ffp-contract=fast", "-fPIC", "-shared", "-fvisibility=hidden"]


def build(tmp, name, src, extra):
    so = os.path.join(tmp, name + ".so")
    subprocess.run([os.environ.get("CXX", "g++").split()[0], *FLAGS, *extra, "-I", os.path.join(ROOT, "include"),
                    src, "-o", so], check=True)
    return ctypes.CDLL(so)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=FLAGS: another block-loop build, e.g. kc512='-DTL_CPU_GEMM_F32_KC=512'")
    args = ap.parse_args()
    flags = common.cpu_flags()
    if "avx512f" not in flags:
        raise SystemExit("the fp32 micro-kernel measured here is the AVX-512 one; this CPU has no AVX-512")
    intel = ["-DTL_CPU_TUNE_INTEL=1"] if "GenuineIntel" in open("/proc/cpuinfo").read() else []
    import threadpoolctl
    threadpoolctl.threadpool_limits(1)
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.empty((N, N), np.float32)
    ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(np.empty_like(c))
    ptr = lambda x: ctypes.c_void_p(x.ctypes.data)  # noqa: E731
    fns = {}
    with tempfile.TemporaryDirectory() as tmp:
        blockloop = os.path.join(os.path.dirname(HERE), "cpu_amx_blockloop", "variant.cc")
        for name, extra in [("ship", "")] + [v.split("=", 1) for v in args.variant]:
            lib = build(tmp, name, blockloop, ["-DF32", *intel, *extra.split()])
            c[:] = 0
            lib.run(ptr(a), ptr(b), ptr(c))
            err = np.abs(c - ref).max() / np.abs(ref).max()
            if err > 1e-5:
                raise SystemExit(f"{name}: relative error {err:.2e}")
            fns[name] = lambda lib=lib: lib.run(ptr(a), ptr(b), ptr(c))
        for strips in (1, 16):
            lib = build(tmp, f"mk{strips}", os.path.join(HERE, "micro_kernel.cc"), [*intel, f"-DSTRIPS={strips}"])
            fns[f"kernel B {'L1' if strips == 1 else 'L2'}"] = lambda lib=lib: lib.run(ptr(a), ptr(b), ptr(c))
        probe = common.fma_probe()
    fns["numpy"] = lambda: np.matmul(a, b, out=c)
    fns["torch"] = lambda: torch.matmul(ta, tb, out=tc)
    for f in fns.values():
        f()
    times = {n: [] for n in fns}
    peaks = []
    for _ in range(args.rounds):
        peaks.append(common.fp32_fma_peak(probes=3, seconds=0.01, lib=probe))
        for n, f in fns.items():
            t = time.thread_time()
            f()
            times[n].append(time.thread_time() - t)
    gflop = 2.0 * N ** 3 / 1e9
    print(f"{common.cpu_model()}; fp32 FMA peak of the core, per round: median {statistics.median(peaks):.1f}, "
          f"range {min(peaks):.1f}-{max(peaks):.1f} GFLOP/s; {args.rounds} rounds")
    for n, ts in times.items():
        rates = [gflop / t for t in ts]
        of_peak = statistics.median(r / p for r, p in zip(rates, peaks))
        vs_torch = statistics.median(t_torch / t for t_torch, t in zip(times["torch"], ts))
        print(f"{n:16s} best {max(rates):6.1f}  median {statistics.median(rates):6.1f} GFLOP/s  "
              f"of the round's peak {of_peak:.3f}  torch time / this {vs_torch:.3f}")


if __name__ == "__main__":
    main()
