"""Runs every benchmark in bench/ that applies to this machine (`make bench`):

  cpu_*.py     always
  ascend_*.py  always (the Ascend model is simulated)
  cuda_*.py, gpu_*.py   only when a CUDA device is visible

Each runs in its own process, prints its table and writes bench/results/<name>.json. Then the cpu
results are summarized in one table, printed and written to the cpu section of docs/PERFORMANCE.md.

  python bench/run_all.py [--only cpu|ascend|cuda] [--skip NAME ...] [--no-doc]
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

CATEGORIES = {"cpu": ("cpu_",), "ascend": ("ascend_",), "cuda": ("cuda_", "gpu_")}


def has_gpu():
    try:
        import tilelang
        return bool(tilelang._core.cuda_available())
    except Exception:
        return False


def benches(only=None):
    out = []
    for fn in sorted(os.listdir(HERE)):
        if not fn.endswith(".py"):
            continue
        for cat, prefixes in CATEGORIES.items():
            if fn.startswith(prefixes) and (only is None or only == cat):
                out.append((cat, fn))
    return out


def cpu_summary():
    """One table from the saved cpu results (whatever subset exists)."""
    t = common.Table("cpu_summary", "cpu summary (ratios measured side by side in one run)",
                     ["workload", "ours", "peer", "ratio", "goal"])
    res = {r["name"]: r for r in common.load_results("cpu_")}
    machine = None
    if "cpu_gemm" in res:
        r = res["cpu_gemm"]
        machine = r["machine"]
        c = {name: i for i, name in enumerate(r["columns"])}
        for row in r["rows"]:
            goal = ">= 0.9 (aim 1.0)" if row[0] == "fp32 2048^3" else ">= 0.5, then 1.0" if "bf16" in row[0] else ""
            extra = f" (oneDNN f32: {row[c['vs oneDNN f32']]}x)" if row[c["vs oneDNN f32"]] not in ("", "n/a") else ""
            t.add(f"GEMM {row[0]}, {row[c['config']]} tiles", f"{row[c['ours GFLOP/s']]:.0f} GFLOP/s",
                  f"{row[c['peer']]} {row[c['peer GFLOP/s']]:.0f}", f"{row[c['ratio']]:.2f}{extra}", goal)
    if "cpu_elementwise" in res:
        r = res["cpu_elementwise"]
        machine = machine or r["machine"]
        c = {name: i for i, name in enumerate(r["columns"])}
        for row in r["rows"]:
            goal = {"add": ">= 0.9 x numpy", "softmax": ">= 1.0 x numpy", "RMSNorm": ">= 1.0 x numpy"}
            g = next((v for k, v in goal.items() if row[0].startswith(k)), "")
            t.add(f"{row[0]}, 64M fp32", f"{row[c['ours GB/s']]:.1f} GB/s", f"numpy {row[c['numpy GB/s']]:.1f}",
                  f"{row[c['vs numpy']]:.2f} (copy: {row[c['vs copy (numpy)']]:.2f})", g)
    if "cpu_overhead" in res:
        r = res["cpu_overhead"]
        machine = machine or r["machine"]
        for row in r["rows"]:
            if row[3]:
                t.add(row[0], f"{row[1]:.3g} {row[2]}", "", "", row[3])
    if machine:
        t.note(f"{machine['date']}, {machine['cpu']}; {machine['blas']}; {machine['compiler']}")
    return t


def write_cpu_doc(table):
    body = [f"Latest `make bench` ({table.notes[-1] if table.notes else ''}).", "", table.markdown(), ""]
    for r in common.load_results("cpu_"):
        if r["name"] == "cpu_summary":
            continue
        tmp = common.Table(r["name"], r["title"], r["columns"])
        tmp.rows = r["rows"]
        body += [f"**{r['title']}** (`bench/{r['name']}.py`, load average {r['machine'].get('load_average', 0):.1f})",
                 "", tmp.markdown(), ""]
        body += [f"- {n}" for n in r["notes"]] + [""]
    common.write_doc_section("cpu", "\n".join(body))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=sorted(CATEGORIES))
    ap.add_argument("--skip", nargs="*", default=[])
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    gpu = has_gpu()
    failed, ran = [], []
    for cat, fn in benches(args.only):
        if fn[:-3] in args.skip or fn in args.skip:
            continue
        if cat == "cuda" and not gpu:
            print(f"-- {fn}: skipped (no CUDA device)")
            continue
        print(f"== {fn}", flush=True)
        t0 = time.time()
        rc = subprocess.run([sys.executable, os.path.join(HERE, fn)], cwd=common.ROOT).returncode
        print(f"-- {fn}: {'ok' if rc == 0 else f'FAILED (exit {rc})'} in {time.time() - t0:.0f} s", flush=True)
        (failed if rc else ran).append(fn)
    if any(fn.startswith("cpu_") for fn in ran):
        table = cpu_summary()
        table.finish()
        if not args.no_doc:
            write_cpu_doc(table)
            print(f"  -> {common.PERF_DOC} (cpu section)")
    if failed:
        print(f"failed: {', '.join(failed)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
