#!/usr/bin/env python3
"""Where three upstream programs spend their time on the cpu target (issue 12: the suite's 150 s).

puzzles ans/08-matrix.py, examples/dynamic_shape/example_dynamic.py and
examples/flash_attention/example_mha_fwd_bshd.py time out on cpu in scripts/upstream_suite.py.
This script loads each program unchanged (with the suite's cpu shim, from an extracted suite
work directory: `scripts/upstream_suite.py --work DIR` extracts one) and measures, at the
program's own sizes, one call of each part the program repeats: our kernel (its first call, which
compiles, separately) and the program's torch reference. Each line gives the wall time and the
process CPU time (all threads: what the part costs on a shared machine), then the number of calls
the program makes of that part, and their product: the program's CPU seconds, part by part.

  python bench/upstream_cpu_phases.py --work /tmp/upstream_suite            # all three
  python bench/upstream_cpu_phases.py --work DIR --only mha --mha-batch 2   # 1/4 of mha's batch

The call counts are read from the programs (see COUNTS); do_bench's counts are those of
tilelang.profiler.do_bench on cpu for calls longer than its budget (one untimed call, one timed:
python/tilelang/profiler/bench.py). --mha-batch scales example_mha_fwd_bshd's batch (8) down on
machines without ~30 GiB for its reference's [8, 32, 4096, 4096] float16 scores; the per-call
numbers are then scaled by 8 / batch in the totals (the work is linear in the batch). Likewise
--dynamic-n for example_dynamic's 16384^3 GEMM (scaled by (16384 / n)^3: larger sizes cost more
per FLOP here, memory stalls in the operand packing, so a scaled total is a lower bound).
"""
import argparse
import os
import resource
import runpy
import sys
import time

# Calls of each part per program run (read from the programs; do_bench: 1 untimed + 1 timed).
COUNTS = {
    # test_puzzle: 1 + 1; bench_puzzle(bench_torch=True) x3: (10 warm-up + 100 timed) each, for
    # torch and for our kernel (the gemv part is negligible: 4096 x 4096).
    "08-matrix": {"kernel": 1 + 3 * 110, "reference": 1 + 3 * 110},
    # the check: 1 kernel call, 1 reference; do_bench(lambda: kernel(...)): 2 calls.
    "example_dynamic": {"kernel": 1 + 2, "reference": 1},
    # assert_allclose: 1 + 1; do_bench(ref, warmup=500): 2; do_bench(warmup=500): 2.
    "example_mha_fwd_bshd": {"kernel": 1 + 2, "reference": 1 + 2},
}


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(name, f):
    c0, w0 = cpu_s(), time.perf_counter()
    out = f()
    c1, w1 = cpu_s(), time.perf_counter()
    return out, (w1 - w0, c1 - c0)


def load(work, path):
    full = os.path.join(work, path)
    sys.path.insert(0, os.path.dirname(full))
    return runpy.run_path(full, run_name="upstream_cpu_phases")


def matrix(work, args):
    import torch
    sys.path.insert(0, os.path.join(work, "puzzles"))
    g = load(work, "puzzles/ans/08-matrix.py")
    hp = dict(M=4096, N=4096, K=4096, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)
    kernel, compile_t = measure("compile", lambda: g["tl_matmul_opt"].compile(**hp))
    a = torch.randn(4096, 4096, dtype=torch.float16)
    b = torch.randn(4096, 4096, dtype=torch.float16)
    _, first = measure("first", lambda: kernel(a, b))
    _, k = measure("kernel", lambda: kernel(a, b))
    g["ref_matmul"](a, b)
    _, r = measure("reference", lambda: g["ref_matmul"](a, b))
    return "08-matrix", compile_t, first, k, r, 1.0


def dynamic(work, args):
    import torch
    g = load(work, "tilelang/examples/dynamic_shape/example_dynamic.py")
    n = args.dynamic_n
    f = g["matmul_dynamic_mnk"]
    a = torch.rand(n, n, dtype=torch.float16)
    b = torch.rand(n, n, dtype=torch.float16)
    params = (128, 128, 32, False, False, "float16", "float16", "float32", 3, 128)
    _, first = measure("first", lambda: f(a, b, *params))
    _, k = measure("kernel", lambda: f(a, b, *params))
    ref = lambda: torch.matmul(a.to(torch.float), b.to(torch.float)).to(torch.float16)  # the program's ref_program
    _, r = measure("reference", ref)
    return "example_dynamic", (0.0, 0.0), first, k, r, (16384 / n) ** 3


def mha(work, args):
    from functools import partial
    g = load(work, "tilelang/examples/flash_attention/example_mha_fwd_bshd.py")
    batch = args.mha_batch
    kernel, compile_t = measure("compile", lambda: g["flashattn"](batch, 32, 4096, 128, False, block_M=128,
                                                                   block_N=128, num_stages=1, threads=128))
    ins = kernel.get_profiler()._get_inputs()
    ref = partial(g["ref_program"], is_causal=False)
    _, first = measure("first", lambda: kernel(*ins))
    _, k = measure("kernel", lambda: kernel(*ins))
    _, r = measure("reference", lambda: ref(*ins[:3]))
    return "example_mha_fwd_bshd", compile_t, first, k, r, 8.0 / batch


PROGRAMS = {"matrix": matrix, "dynamic": dynamic, "mha": mha}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help="an extracted suite directory (scripts/upstream_suite.py --work)")
    ap.add_argument("--only", choices=sorted(PROGRAMS), action="append")
    ap.add_argument("--mha-batch", type=int, default=8)
    ap.add_argument("--dynamic-n", type=int, default=16384, help="example_dynamic's M = N = K (16384)")
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    shim = os.path.join(work, "cpu_shim.py")
    if not os.path.exists(shim):
        sys.exit(f"{shim} is missing: run scripts/upstream_suite.py --device cpu --work {args.work} once")
    os.environ.setdefault("TILELANG_TESTING_CUDA_ON_CPU", "1")
    exec(compile(open(shim).read(), "upstream_suite_shim", "exec"), {})
    import torch
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; cpu count {os.cpu_count()}")
    for key in args.only or ["matrix", "dynamic", "mha"]:
        name, compile_t, first, k, r, scale = PROGRAMS[key](work, args)
        n = COUNTS[name]
        print(f"\n{name}" + (f" (scaled: per-call times x{scale:g} in the totals)" if scale != 1 else ""))
        print(f"  compile          wall {compile_t[0]:8.2f} s  cpu {compile_t[1]:8.2f} s")
        print(f"  first call       wall {first[0]:8.2f} s  cpu {first[1]:8.2f} s")
        print(f"  kernel call      wall {k[0]:8.2f} s  cpu {k[1]:8.2f} s  x {n['kernel']:3d} calls = "
              f"{k[1] * scale * n['kernel']:8.1f} cpu-s")
        print(f"  torch reference  wall {r[0]:8.2f} s  cpu {r[1]:8.2f} s  x {n['reference']:3d} calls = "
              f"{r[1] * scale * n['reference']:8.1f} cpu-s")


if __name__ == "__main__":
    main()
