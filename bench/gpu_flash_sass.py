"""Diagnostics for the warp-specialized flash-attention kernel on sm_90a: for each pass-config variant,
ptxas's report (wgmma serialization warnings, registers, spills), whole-kernel SASS counts, and the
SASS written to $OUT/flash_<variant>.sass for reading. Needs nvcc's cuobjdump; no GPU run.

    python3 bench/gpu_flash_sass.py [causal]
"""
import os
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "tests", "python", "cuda"),
                os.path.join(os.path.dirname(__file__), "..", "tests", "python")]
import cuda_kernels as K  # noqa: E402
from cuda_util import build  # noqa: E402
from gpu_hopper import sass_stats  # noqa: E402

VARIANTS = {"overlap": {"tl.disable_persistent": True},
            "plain": {"tl.disable_persistent": True, "tl.disable_wgmma_overlap": True}}


def main():
    causal = "causal" in sys.argv[1:]
    out = os.environ.get("OUT", tempfile.gettempdir())
    f = K.flashattn(8, 16, 4096, 128, causal, block_M=128, block_N=128, num_stages=2, threads=256)
    for name, cfg in VARIANTS.items():
        b = build(f, "sm_90a", cfg)
        log = [ln for ln in b.get("log", "").splitlines()
               if any(w in ln for w in ("wgmma", "Performance", "serializ", "spill", "Used"))]
        print(f"== {name} causal={causal}: {sass_stats(b['cubin'])}")
        for ln in log:
            print("   ", ln.strip()[:300])
        with tempfile.NamedTemporaryFile(suffix=".cubin") as t:
            t.write(b["cubin"])
            t.flush()
            sass = subprocess.run(["cuobjdump", "-sass", t.name], capture_output=True, text=True).stdout
        with open(os.path.join(out, f"flash_{name}{'_causal' if causal else ''}.sass"), "w") as fo:
            fo.write(sass)
        with open(os.path.join(out, f"flash_{name}{'_causal' if causal else ''}.cu"), "w") as fo:
            fo.write(b["source"])


if __name__ == "__main__":
    main()
