"""AutoTuner wall time, exhaustive against top_k=3, each mode in a fresh process (issue 19): nothing
compiled, lowered or drawn earlier in the process can help either mode (only the CUDA
context is created first), unlike the end-to-end rows of
bench/tilesight_validate.py, which run after its per-configuration sweep. Same configurations, the
same kernel builders and the same AutoTuner calls as there (autotune_end_to_end with one mode).

    python3 bench/tilesight_autotune_e2e.py [--rounds 2] [--out F.json]    # cuda, GEMM 4096^3 and flash
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def one(workload, mode):
    import tilesight_validate as tv
    import kernel_zoo as zoo
    if workload == "gemm":
        builder = lambda block_M, block_N, block_K, num_stages, threads: zoo.gemm(  # noqa: E731
            4096, 4096, 4096, block_M, block_N, block_K, "float16", "float32", "float16", num_stages=num_stages,
            threads=threads)
        configs = tv.GEMM_CONFIGS
    else:
        builder = lambda block_M, block_N, num_stages, threads: zoo.flashattn(  # noqa: E731
            8, 16, 4096, 128, False, block_M=block_M, block_N=block_N, num_stages=num_stages, threads=threads)
        configs = tv.FLASH_CONFIGS
    # The process's CUDA context (torch's, which our launches share) exists before the clock starts:
    # every GPU program has it, and it is not tuning work (3-4 s of the first measure otherwise).
    import torch
    torch.zeros(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    out = tv.autotune_end_to_end(workload, builder, configs, "cuda", warmup=25, rep=100, modes=(mode,))
    print("RESULT " + json.dumps(out[mode] | {"workload": workload, "mode": mode}, default=str), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default="tilesight_autotune_e2e.json")
    a = ap.parse_args()
    if a.one:
        return one(*a.one)
    rows = []
    for rnd in range(a.rounds):
        for workload in ("gemm", "flash"):
            for mode in (("top_3", "exhaustive") if rnd % 2 else ("exhaustive", "top_3")):
                t = time.time()
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", workload, mode],
                                   capture_output=True, text=True, timeout=600)
                got = [json.loads(ln[7:]) for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
                for g in got:
                    g.update(round=rnd, process_s=time.time() - t)
                    rows.append(g)
                    print(f"round {rnd} {workload} {mode}: wall {g.get('wall_s'):.2f} s, phases {g.get('phases_s')}, "
                          f"latency {g.get('latency_ms')}", flush=True)
                if p.returncode or not got:
                    print(p.stdout[-1500:], p.stderr[-2500:], flush=True)
    summary = {}
    for workload in ("gemm", "flash"):
        for rnd in range(a.rounds):
            ex = [r for r in rows if r["workload"] == workload and r["round"] == rnd and r["mode"] == "exhaustive"]
            tk = [r for r in rows if r["workload"] == workload and r["round"] == rnd and r["mode"] == "top_3"]
            if ex and tk and "wall_s" in ex[0] and "wall_s" in tk[0]:
                summary.setdefault(workload, []).append(ex[0]["wall_s"] / tk[0]["wall_s"])
    print("wall speed-up exhaustive / top_3 per round:", summary, flush=True)
    with open(a.out, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows, "speedup": summary}, f,
                  indent=1)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
