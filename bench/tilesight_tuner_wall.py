"""The AutoTuner's wall time, exhaustive against top_k=3, end to end without a device (issue 19):
`AutoTuner.run()` for the cuda validation configurations (GEMM fp16 4096^3 and flash attention B8
H16 S4096 D128, 24 each, target cuda -arch=sm_90a), each mode in a fresh process with a fresh kernel
cache, both orders. Everything the tuner does runs for real (building, TileSight's ranking and its
lowerings, NVRTC) except the device: each configuration's timing is replaced by a wait of
--measure-s seconds (default 0.146, what one configuration's do_bench(warmup=25, rep=100) took on an
H100 for flash attention, docs/PERFORMANCE.md) that holds no lock, as a device measurement mostly
waits on the GPU. The fake latency is a fixed function of the configuration, so both modes see the
same ordering. Both modes go through the same profiler calls with the same arguments.

    python bench/tilesight_tuner_wall.py [--rounds 2] [--workloads flash,gemm] [--measure-s 0.146] [--out F.json]

PYTHONPATH selects the build (a copy of python/ made before a change, alternated with this tree's).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = "cuda -arch=sm_90a"


class _FakeProfiler:
    """Stands in for tilelang.profiler.Profiler where there is no device: the inputs are empty and
    do_bench waits `seconds` and returns a latency derived from the kernel's source."""

    def __init__(self, kernel, seconds):
        self.kernel, self.seconds = kernel, seconds

    def _get_params(self, with_output=False):
        return []

    def _get_inputs(self, with_output=False, refresh=False, dynamic_symbolic_constraints=None):
        return []

    def do_bench(self, func=None, warmup=25, rep=100, input_tensors=None, **_kw):
        time.sleep(self.seconds)
        return 1.0 + (zlib.crc32(self.kernel.kernel_source.encode()) % 1000) / 1000.0


def one(workload, mode, seconds):
    if not os.environ.get("PYTHONPATH"):
        sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.append(os.path.join(ROOT, "tests", "python"))
    sys.path.append(HERE)
    import tilelang  # noqa: F401
    import kernel_zoo as zoo
    from tilelang.autotuner import AutoTuner
    from tilelang.jit.kernel import JITKernel
    from tilesight_validate import FLASH_CONFIGS, GEMM_CONFIGS
    JITKernel.get_profiler = lambda self, tensor_supply_type=None: _FakeProfiler(self, seconds)
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-tuner-wall-")
    if workload == "gemm":
        builder = lambda block_M, block_N, block_K, num_stages, threads: zoo.gemm(  # noqa: E731
            4096, 4096, 4096, block_M, block_N, block_K, "float16", "float32", "float16", num_stages=num_stages,
            threads=threads)
        configs = GEMM_CONFIGS
    else:
        builder = lambda block_M, block_N, num_stages, threads: zoo.flashattn(  # noqa: E731
            8, 16, 4096, 128, False, block_M=block_M, block_N=block_N, num_stages=num_stages, threads=threads)
        configs = FLASH_CONFIGS
    top_k = None if mode == "exhaustive" else 3
    c0, t0 = time.process_time(), time.monotonic()
    tuner = AutoTuner.from_kernel(kernel=builder, configs=configs, top_k=top_k)
    tuner.set_compile_args(out_idx=[-1], target=TARGET).set_profile_args(skip_check=True)
    tuner.verbose = False
    res = tuner.run(warmup=25, rep=100)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    print("RESULT " + json.dumps({"workload": workload, "mode": mode, "wall_s": wall, "cpu_s": cpu,
                                  "config": res.config, "phases_s": tuner.phase_seconds,
                                  "measured": sum(1 for r in res.results if r.status == "ok"),
                                  "load": os.getloadavg()[0], "tilelang": tilelang.__file__}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workloads", default="flash,gemm")
    ap.add_argument("--modes", default="exhaustive,top_3")
    ap.add_argument("--measure-s", type=float, default=0.146)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.one:
        return one(*a.one, a.measure_s)
    rows = []
    modes = a.modes.split(",")
    for rnd in range(a.rounds):
        for w in a.workloads.split(","):
            for mode in (modes[::-1] if rnd % 2 else modes):
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", w, mode,
                                    "--measure-s", str(a.measure_s)], capture_output=True, text=True, timeout=900)
                got = [json.loads(ln[7:]) for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
                if p.returncode or not got:
                    print(p.stdout[-1500:], p.stderr[-2500:], flush=True)
                    continue
                g = got[0] | {"round": rnd}
                rows.append(g)
                ph = {k: round(v, 3) if isinstance(v, float) else v for k, v in (g["phases_s"] or {}).items()}
                print(f"round {rnd} {w} {mode}: wall {g['wall_s']:.3f} s (CPU {g['cpu_s']:.2f} s), load "
                      f"{g['load']:.1f}, phases {ph}, picked {tuple(g['config'].values())}", flush=True)
    for w in a.workloads.split(","):
        ex = [r["wall_s"] for r in rows if r["workload"] == w and r["mode"] == "exhaustive"]
        tk = [r["wall_s"] for r in rows if r["workload"] == w and r["mode"] == "top_3"]
        if ex and tk:
            print(f"{w}: exhaustive {[round(x, 2) for x in ex]} s, top_3 {[round(x, 2) for x in tk]} s, "
                  f"ratio of medians {sorted(ex)[len(ex) // 2] / sorted(tk)[len(tk) // 2]:.2f}", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "measure_s": a.measure_s,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
