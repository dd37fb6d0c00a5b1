"""Runs every benchmark in bench/ that applies to this machine (`make bench`):

  cpu_*.py     always
  ascend_*.py  always (the Ascend model is simulated)
  cuda_*.py, gpu_*.py   only when a CUDA device is visible

A benchmark is a script of those names with a `__main__` block (helper modules have none), except
*_profile.py (single launches for a profiler, e.g. bench/gpu_profile.py under ncu). Each
runs in its own process and prints its table; the cpu ones write bench/results/<name>.json, the gpu
ones append records to $TL_BENCH_JSON (bench/results/gpu_results.jsonl, emptied first), which
<category>_summary.py (bench/gpu_summary.py) then prints. Finally the cpu results are summarized in
one table, printed and written to the cpu section of docs/PERFORMANCE.md.

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


def is_script(fn):
    with open(os.path.join(HERE, fn)) as f:
        return "__name__ == \"__main__\"" in f.read()


def benches(only=None):
    """(category, file) of the benchmarks, and {category: summary file}."""
    out, summaries = [], {}
    for fn in sorted(os.listdir(HERE)):
        if not fn.endswith(".py") or fn.endswith("_profile.py") or not is_script(fn):
            continue
        for cat, prefixes in CATEGORIES.items():
            if fn.startswith(prefixes) and (only is None or only == cat):
                if fn.endswith("_summary.py"):
                    summaries[cat] = fn
                else:
                    out.append((cat, fn))
    return out, summaries


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

        def cell(v):  # a ratio, or the reason it was refused (peer below its speed)
            return f"{v:.2f}" if isinstance(v, (int, float)) else str(v)
        for row in r["rows"]:
            goal = ">= 1.05 x max(OpenBLAS, MKL)" if row[0].startswith("fp32") else ">= 1.0 x oneDNN"
            peer_gf = [f"{p} {row[c[p + ' GFLOP/s']]:.0f}" for p in ("numpy", "torch")
                       if isinstance(row[c[p + " GFLOP/s"]], (int, float))]
            t.add(f"GEMM {row[0]}, {row[c['config']]} tiles", f"{row[c['ours GFLOP/s']]:.0f} GFLOP/s",
                  ", ".join(peer_gf), f"numpy: {cell(row[c['vs numpy']])}; torch: {cell(row[c['vs torch']])}", goal)
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
    scripts, summaries = benches(args.only)
    env = dict(os.environ)
    gpu_json = os.path.join(common.RESULTS, "gpu_results.jsonl")
    if gpu and any(cat == "cuda" for cat, _ in scripts):
        os.makedirs(common.RESULTS, exist_ok=True)
        open(gpu_json, "w").close()
        env["TL_BENCH_JSON"] = gpu_json
    for cat, fn in scripts:
        if fn[:-3] in args.skip or fn in args.skip:
            continue
        if cat == "cuda" and not gpu:
            print(f"-- {fn}: skipped (no CUDA device)")
            continue
        print(f"== {fn}", flush=True)
        t0 = time.time()
        rc = subprocess.run([sys.executable, os.path.join(HERE, fn)], cwd=common.ROOT, env=env).returncode
        print(f"-- {fn}: {'ok' if rc == 0 else f'FAILED (exit {rc})'} in {time.time() - t0:.0f} s", flush=True)
        (failed if rc else ran).append(fn)
    if "cuda" in summaries and gpu and os.path.exists(gpu_json) and os.path.getsize(gpu_json) > 0:
        subprocess.run([sys.executable, os.path.join(HERE, summaries["cuda"]), gpu_json], cwd=common.ROOT)
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
