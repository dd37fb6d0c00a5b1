"""The compiler's own time for a cold compile (no kernel cache, no in-process memo): lowering,
code generation and, for cpu, the g++ build; ascend builds the simulator program in process, so its
time is the compiler's alone. Used to check that a refactoring of the compiler does not slow it
(issue 14: the TileOp interface).

    PYTHONPATH=python .venv/bin/python bench/compile_host.py [--reps 7] [--targets cpu,ascend]

Kernels: a float32 cpu GEMM (bench/cpu_gemm.py, 512^3, 128x128x32 tiles), the Ascend Expert GEMM
(examples/ascend/gemm_double_buffer.py, 1024^3) and the README-style T.gemm_v0 kernel
(examples/ascend/gemm_expert.py). Each is compiled `reps` times, each time into a fresh private kernel cache with the in-process memo
cleared; the table gives the median wall time and the median and minimum CPU time of this process (every
thread; for cpu the g++ child is not included, so its CPU column is the compiler's own work) in
milliseconds. Small compiles' wall time moves in steps of the scheduler tick under load: compare CPU. To compare two builds, run the
script under each build's PYTHONPATH in the same session."""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples", "ascend"))

import tilelang  # noqa: E402
import cpu_gemm  # noqa: E402
import gemm_double_buffer  # noqa: E402
import gemm_expert  # noqa: E402


def kernels():
    yield "cpu gemm f32 512^3", lambda: cpu_gemm.matmul(512, 512, 512, 128, 128, 32), "cpu", {}
    yield "ascend gemm (T.mma, hand sync) 1024^3", lambda: gemm_double_buffer.matmul.build(1024, 1024, 1024), "ascend", {}
    yield ("ascend gemm_v0 1024^3", lambda: gemm_expert.matmul.build(1024, 1024, 1024, 128, 128, 128, core_num=24),
           "ascend", {})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--targets", default="cpu,ascend", help="comma-separated subset of cpu, ascend")
    args = ap.parse_args()
    print(f"tilelang from {os.path.dirname(tilelang.__file__)}")
    print(f"{'kernel':40s} {'wall median ms':>15s} {'cpu median ms':>14s} {'cpu min ms':>11s}")
    for name, build, target, configs in kernels():
        if target not in args.targets.split(","):
            continue
        times, cpu = [], []
        for _ in range(args.reps):
            with tempfile.TemporaryDirectory(prefix="tl_cold_") as cache:
                os.environ["TILELANG_CACHE_DIR"] = cache
                tilelang._core.clear_memo()
                f = build()
                t0, c0 = time.perf_counter(), time.process_time()
                k = tilelang.compile(f, target=target, out_idx=[-1] if target == "ascend" else None,
                                     pass_configs=configs)
                times.append((time.perf_counter() - t0) * 1e3)
                cpu.append((time.process_time() - c0) * 1e3)
                assert not k.cache_hit
        print(f"{name:40s} {statistics.median(times):15.1f} {statistics.median(cpu):14.2f} {min(cpu):11.2f}")


if __name__ == "__main__":
    main()
