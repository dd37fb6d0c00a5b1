"""Where a cold compile's time goes, without a GPU (issue 16: cold compile <= 1.5 s): for the MLA
decode example (B132 H128 kv 8192) and the flash attention kernel of bench/gpu_hopper.py (B8 H16
S4096 D128, causal and not, 128x128 tiles, 256 threads), each measured in a fresh process (nothing
warm):

  import         `import tilelang` (the extension module and the language);
  frontend       building the PrimFunc from the Python source;
  lower+codegen  the cuda pass pipeline and the CUDA C++ code generator (lower_func; TL_PASS_TIMING=1
                 prints each pass);
  nvrtc          NVRTC on that source, the process's first compile, split by NVRTC's own timer
                 (--time) into its C++ front end, the NVVM optimizer and ptxas ("PTX translation");
  nvrtc2         the same source again in that process (NVRTC's automatic PCH of the headers built
                 by the first compile is reused).

    python3 bench/compile_breakdown.py [--kernels mla,flash,flash_causal] [--arch sm_90a] [--rounds 3]
                                       [--pch-modes on,off]

pch modes: on = NVRTC's automatic PCH (the default of tilelang.compile), off = no PCH
(TILELANG_NVRTC_PCH=0). Prints one line per process and the median per (kernel, mode).
NVRTC 13.0 binds a PCH to the heap address of the NVRTC instance that made it (warning 20282 when a
file made by another process is given to --use-pch), so it cannot be kept across processes."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
import tilelang
from tilelang import _core
t1 = time.perf_counter()
sys.path[:0] = [os.path.join(ROOT, "examples", "mla_decode"), os.path.join(ROOT, "tests", "python")]
kind = KIND
if kind == "mla":
    import example_mla_decode as E
    f = E.mla_decode(132, 128, 8192)
    cfg = {}
else:
    import kernel_zoo as Z
    f = Z.flashattn(8, 16, 4096, 128, kind == "flash_causal", block_M=128, block_N=128, num_stages=2, threads=256)
    cfg = {"tl.disable_persistent": True}
ir = f.ir if hasattr(f, "ir") else f
t2 = time.perf_counter()
lowered, src = _core.cuda.lower_func(ir, ARCH, cfg)
t3 = time.perf_counter()
import tempfile
tf = os.path.join(tempfile.mkdtemp(), "t.csv")
r1 = _core.cuda.compile(src, "kernel.cu", ARCH, False, False, ["--time=" + tf])
t4 = time.perf_counter()
r2 = _core.cuda.compile(src, "kernel.cu", ARCH, False, False, [])
t5 = time.perf_counter()
ph = {}
for line in open(tf).read().splitlines()[1:]:
    parts = [x.strip() for x in line.split(",")]
    if len(parts) >= 3:
        ph[parts[1]] = float(parts[2]) / 1e3
print(json.dumps({"import": t1 - t0, "frontend": t2 - t1, "lower+codegen": t3 - t2, "nvrtc": t4 - t3,
                  "nvrtc_cxx": ph.get("CUDA C++ Frontend", 0.0), "nvrtc_nvvm": ph.get("NVVM Optimizer", 0.0),
                  "nvrtc_ptxas": ph.get("PTX Translation", 0.0), "nvrtc2": t5 - t4, "total_cold": t4 - t1,
                  "source_bytes": len(src)}))
"""


def run_child(kind, arch, env):
    code = CHILD.replace("ROOT", repr(os.path.abspath(ROOT))).replace("KIND", repr(kind)).replace("ARCH", repr(arch))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv):
    kernels = ["mla", "flash", "flash_causal"]
    arch, rounds, modes = "sm_90a", 3, ["on", "off"]
    for i, a in enumerate(argv):
        if a == "--kernels":
            kernels = argv[i + 1].split(",")
        if a == "--arch":
            arch = argv[i + 1]
        if a == "--rounds":
            rounds = int(argv[i + 1])
        if a == "--pch-modes":
            modes = argv[i + 1].split(",")
    base = dict(os.environ)
    base["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + base.get("PYTHONPATH", "")
    base.setdefault("TILELANG_SOURCE_DIR", os.path.abspath(ROOT))
    results = {}
    for kind in kernels:
        for mode in modes:
            rows = []
            with tempfile.TemporaryDirectory() as cache:
                env = dict(base, TILELANG_CACHE_DIR=cache)
                if mode == "off":
                    env["TILELANG_NVRTC_PCH"] = "0"
                for _ in range(rounds):
                    r = run_child(kind, arch, env)
                    rows.append(r)
                    print(f"{kind:13s} pch={mode:8s} " + "  ".join(
                        f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()), flush=True)
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            results[(kind, mode)] = med
    print("\nmedians (s):")
    for (kind, mode), m in results.items():
        print(f"  {kind:13s} pch={mode:8s} frontend {m['frontend']:.3f}  lower+codegen {m['lower+codegen']:.3f}  "
              f"nvrtc {m['nvrtc']:.3f} (c++ {m['nvrtc_cxx']:.3f}, nvvm {m['nvrtc_nvvm']:.3f}, ptxas "
              f"{m['nvrtc_ptxas']:.3f}; again {m['nvrtc2']:.3f})  cold total {m['total_cold']:.3f}  "
              f"import {m['import']:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
