"""The AutoTuner's ranking phase (top_k's TileSight estimates, issue 19) without a device, and the
estimates themselves, so that a change to what the ranking costs can be shown not to change what it
ranks.

    python bench/tilesight_rank_phase.py --rank [--rounds 3] [--workloads flash,gemm] [--threads N]
        Each round runs the rank phase (AutoTuner._select_top_k over IRs already built: 24 sm_90a
        lowerings in the tuner's thread pool, the estimates' model in the calling thread; in a
        tuning run the lowerings start while the IRs are built, so build + rank is what compares
        with this) in a fresh process,
        with a fresh kernel cache, and prints its wall and CPU seconds and the machine's load.
        PYTHONPATH selects the build (e.g. a copy of python/ made before a change, alternated with
        this tree's).
    python bench/tilesight_rank_phase.py --estimates --out F.json
        Every validation workload of bench/tilesight_validate.py (GEMM fp16 at its three shapes,
        flash attention B8 H16 S4096 D128, causal and not; 24 configurations each) estimated as the
        tuner estimates it (target cuda -arch=sm_90a, the tuner's compile options): per configuration
        the estimated time, whether it fits and why not, and the sha1 of its sm_90a kernel source;
        per workload the estimated top 3. Two such files from two builds compare with --compare A B.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = "cuda -arch=sm_90a"


def _paths():
    # tilelang from PYTHONPATH when set (the build under test), imported before tilesight_validate
    # (which puts this tree's python/ first on the path).
    if not os.environ.get("PYTHONPATH"):
        sys.path.insert(0, os.path.join(ROOT, "python"))
    import tilelang  # noqa: F401
    sys.path.append(os.path.join(ROOT, "tests", "python"))
    sys.path.append(HERE)


def _workloads(names):
    import kernel_zoo as zoo
    from tilesight_validate import FLASH_CONFIGS, GEMM_CONFIGS, GEMM_SHAPES
    out = []
    if "gemm" in names:
        for (M, N, K) in GEMM_SHAPES:
            out.append((f"gemm fp16 {M}x{N}x{K}", GEMM_CONFIGS,
                        lambda block_M, block_N, block_K, num_stages, threads, M=M, N=N, K=K: zoo.gemm(
                            M, N, K, block_M, block_N, block_K, "float16", "float32", "float16",
                            num_stages=num_stages, threads=threads)))
    if "flash" in names:
        for causal in (False, True):
            out.append((f"flash fwd B8 H16 S4096 D128 causal={causal}", FLASH_CONFIGS,
                        lambda block_M, block_N, num_stages, threads, causal=causal: zoo.flashattn(
                            8, 16, 4096, 128, causal, block_M=block_M, block_N=block_N, num_stages=num_stages,
                            threads=threads)))
    return out


def _tuner(builder, configs):
    from tilelang.autotuner import AutoTuner
    tuner = AutoTuner.from_kernel(kernel=builder, configs=configs, top_k=3)
    tuner.set_compile_args(out_idx=[-1], target=TARGET)
    tuner.verbose = False
    return tuner


def rank_once(workload):
    """One rank phase in this (fresh) process: build the IRs, then time _select_top_k."""
    _paths()
    from tilelang import _core
    from tilelang.autotuner.param import ConfigResult
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-rank-")
    name, configs, builder = [w for w in _workloads({workload.split()[0]}) if w[0] == workload][0]
    tuner = _tuner(builder, configs)
    results = [ConfigResult(dict(c)) for c in configs]
    prims = [tuner._elaborate(c) for c in configs]
    c0, t0 = time.process_time(), time.monotonic()
    tuner._select_top_k(prims, results)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    kept = [r.config for r, p in zip(results, prims) if p is not None]
    print("RESULT " + json.dumps({"workload": name, "rank_s": wall, "cpu_s": cpu, "kept": kept,
                                  "threads": tuner._num_workers(len(configs)), "load": os.getloadavg()[0],
                                  "core": _core.__file__}), flush=True)


def rank(args):
    names = {"flash": "flash fwd B8 H16 S4096 D128 causal=False", "gemm": "gemm fp16 4096x4096x4096"}
    rows = []
    for rnd in range(args.rounds):
        for w in args.workloads.split(","):
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--rank-once", names[w]],
                               capture_output=True, text=True, timeout=600)
            got = [json.loads(ln[7:]) for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
            if p.returncode or not got:
                print(p.stdout[-1500:], p.stderr[-2500:], flush=True)
                continue
            g = got[0] | {"round": rnd}
            rows.append(g)
            print(f"round {rnd} {w}: rank {g['rank_s']:.3f} s wall, {g['cpu_s']:.3f} s CPU, {g['threads']} threads, "
                  f"load {g['load']:.1f}, kept {[tuple(c.values()) for c in g['kept']]}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


def estimates(args):
    _paths()
    import tilelang  # noqa: F401
    from tilelang import _core, tilesight
    from tilelang.autotuner.param import ConfigResult
    from tilelang.tilesight.analysis import _prim_of
    out = {}
    for name, configs, builder in _workloads(set(args.workloads.split(","))):
        tuner = _tuner(builder, configs)
        rows = []
        for c in configs:
            prim = tuner._elaborate(c)
            est = tilesight.estimate(prim, target=tuner._estimate_target(prim),
                                     compile_options=tuner._compile_options(c))
            try:
                src = _core.cuda.lower_func(_prim_of(prim), "sm_90a", {})[1]
                sha = hashlib.sha1(src.encode()).hexdigest()
            except Exception as e:  # noqa: BLE001
                sha = f"{type(e).__name__}"
            rows.append({"config": c, "est_s": est.time_s if est.fits else None, "fits": est.fits,
                         "reasons": list(est.reasons), "bound": est.bound, "source_sha1": sha})
        # the tuner's own ranking (prims and results as _run builds them)
        results = [ConfigResult(dict(c)) for c in configs]
        prims = [tuner._elaborate(c) for c in configs]
        tuner._select_top_k(prims, results)
        top = [r.config for r, p in zip(results, prims) if p is not None]
        out[name] = {"rows": rows, "tuner_top_3": top}
        print(f"{name}: tuner's top 3 {[tuple(c.values()) for c in top]}", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


def compare(a, b):
    A, B = (json.load(open(x)) for x in (a, b))
    same = True
    for name in A:
        ra, rb = A[name]["rows"], B[name]["rows"]
        diffs = [(x["config"], k, x[k], y[k]) for x, y in zip(ra, rb) for k in ("est_s", "fits", "reasons",
                                                                                "source_sha1") if x[k] != y[k]]
        top_same = A[name]["tuner_top_3"] == B[name]["tuner_top_3"]
        same &= top_same and not diffs
        print(f"{name}: top 3 {'unchanged' if top_same else 'CHANGED'} "
              f"{[tuple(c.values()) for c in B[name]['tuner_top_3']]}; {len(diffs)} per-config differences")
        for d in diffs:
            print("   ", d)
    return 0 if same else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rank", action="store_true")
    ap.add_argument("--rank-once")
    ap.add_argument("--estimates", action="store_true")
    ap.add_argument("--compare", nargs=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workloads", default="flash,gemm")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.rank_once:
        return rank_once(a.rank_once)
    if a.compare:
        return compare(*a.compare)
    if a.estimates:
        if not a.out:
            ap.error("--estimates needs --out")
        return estimates(a)
    if a.rank:
        return rank(a)
    ap.error("one of --rank, --estimates, --compare")


if __name__ == "__main__":
    sys.exit(main())
