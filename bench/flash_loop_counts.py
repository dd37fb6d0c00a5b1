"""Instructions per KV block of the sm_90a flash-attention kernel, without a GPU (issue 16): the kernel
of bench/gpu_hopper.py's shape (B8 H16 S4096 D128 fp16, 128x128 tiles, 2 stages, 256 consumer
threads, warp-specialized, one CTA per tile) is generated, compiled by NVRTC for sm_90a, and the
instructions of its main loop (the consumers' loop over KV blocks: the largest loop closed by a
conditional backward branch) are counted in the PTX and, where cuobjdump is found (PATH, or
TL_CUOBJDUMP naming it; e.g. `pip install --target DIR nvidia-cuda-cuobjdump`), in the SASS.

    python3 bench/flash_loop_counts.py [causal] [--previous | --before] [--config tl.key=1 ...] [--sass-out FILE]

Each --config adds a pass config (a variant: e.g. tl.disable_exp2_ftz=1 keeps exp2f's subnormal
handling); --previous counts the kernel of the previous session's final code (PREVIOUS: the switches
of 2026-11-27's second session off); --before counts the kernel as generated before 2026-11-27
(flash_before, applied to the --previous kernel). Prints one line per count and the SASS opcode
histogram of the loop.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests", "python", "cuda"), os.path.join(HERE, "..", "tests", "python")]

# The kernel as the session of 2026-11-27 00:28-03:28 left it: this session's changes switched off
# (docs/PERFORMANCE.md, "Fewer instructions per KV block, second pass").
PREVIOUS = {"tl.disable_loop_proxy_fence_elision": True, "tl.disable_wgmma_zero_init": True,
            "tl.disable_deferred_row_sum": True}

_PTX_SKIP = re.compile(r"^\s*($|//|\.|\{|\}|\$|[A-Za-z_][\w$]*:)")


def ptx_main_loop(ptx):
    """The instruction lines of the largest PTX loop closed by a conditional branch back to a
    $L label (inline-asm spin loops use their own labels and are counted inside it)."""
    lines = ptx.splitlines()
    labels = {}
    best = None
    for i, ln in enumerate(lines):
        m = re.match(r"^(\$L__\w+):", ln.strip())
        if m:
            labels[m.group(1)] = i
            continue
        m = re.match(r"^\s*@%p\d+\s+bra(?:\.uni)?\s+(\$L__\w+);", ln)
        if m and m.group(1) in labels:
            lo = labels[m.group(1)]
            if best is None or i - lo > best[1] - best[0]:
                best = (lo, i)
    if best is None:
        return []
    return [ln.strip() for ln in lines[best[0]:best[1] + 1] if not _PTX_SKIP.match(ln)]


def sass_instructions(sass):
    """[(address, instruction text)] of cuobjdump -sass output."""
    ins = []
    for ln in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", ln)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    return ins


def largest_sass_loop(ins, predicated=True):
    """The instruction texts of the largest loop of `ins` (sass_instructions) closed by a backward
    BRA to an address (`predicated`: only a conditional one)."""
    best = None
    pattern = re.compile(r"@!?P\d\s+BRA\s+0x([0-9a-f]+)" if predicated else r"BRA\s+0x([0-9a-f]+)")
    for addr, s in ins:
        m = pattern.search(s)
        if m and int(m.group(1), 16) < addr:
            lo = int(m.group(1), 16)
            if best is None or addr - lo > best[1] - best[0]:
                best = (lo, addr)
    return [] if best is None else [s for a, s in ins if best[0] <= a <= best[1]]


def sass_opcode(text):
    """The opcode of an instruction text, without its predicate."""
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def sass_main_loop(sass):
    """(opcode list) of the largest SASS loop closed by a predicated backward BRA."""
    return [sass_opcode(s) for s in largest_sass_loop(sass_instructions(sass))]


def flash_before(src):
    """The flash kernel's source as generated before the instruction-overhead changes of
    2026-11-27 (docs/PERFORMANCE.md, "Instructions per KV block"): exp2f with subnormal results,
    the shuffle mask computed per call, the warpgroup index per thread (header switches), P cast
    element by element and the row reductions started from the identity (source edits)."""
    lines = src.split("\n")
    lines[1:1] = ["#define TL_EXP2_SUBNORMAL 1", "#define TL_ALLREDUCE_MASK_AT_RUN_TIME 1",
                  "#define TL_WGMMA_WARPGROUP_PER_THREAD 1"]
    out = "\n".join(lines)
    out, k = re.subn(r"for \(int (\w+) = 0; \1 < (\d+); \+\+\1\) \{\n(\s*)tl::copy_cast<2>\(\(&(\w+)\[\(2 \* \1\)\]\), "
                     r"\(&(\w+)\[\(2 \* \1\)\]\)\);",
                     lambda m: f"for (int {m[1]} = 0; {m[1]} < {2 * int(m[2])}; ++{m[1]}) {{\n{m[3]}{m[4]}[{m[1]}] = "
                               f"static_cast<tl::half_t>({m[5]}[{m[1]}]);", out)
    assert k >= 1, "no packed P cast found"
    out = re.sub(r"(red_\d+\[\d+\] = .*?)tl::max\((\w+)\[(\d+)\], ",
                 lambda m: f"{m[1]}tl::max(tl::max((-tl::numeric_limits<float>::infinity()), {m[2]}[{m[3]}]), ", out)
    out = re.sub(r"(red_\d+\[\d+\] = \(*)\((\w+)\[(\d+)\] \+ ",
                 lambda m: f"{m[1]}(((0.0f) + {m[2]}[{m[3]}]) + ", out)
    return out


def ptx_opcode(line):
    return re.sub(r"^@!?%?\w+\s+", "", line).split()[0].rstrip(";")


def cuobjdump():
    return os.environ.get("TL_CUOBJDUMP") or shutil.which("cuobjdump")


def flash_kernel(causal=False, configs=None):
    """The generated source, PTX and cubin of the flash kernel (the NVRTC compile of build_func)."""
    import cuda_kernels as K
    from cuda_util import build
    from tilelang import _core
    cfg = {"tl.disable_persistent": True}
    cfg.update(configs or {})
    f = K.flashattn(8, 16, 4096, 128, causal, block_M=128, block_N=128, num_stages=2, threads=256)
    b = build(f, "sm_90a", cfg)
    r = _core.cuda.compile(b["source"], "kernel.cu", "sm_90a", False, True, [])
    return b["source"], r["ptx"], b["cubin"], b["usage"]


def sass_of(cubin):
    tool = cuobjdump()
    if not tool:
        return None
    with tempfile.NamedTemporaryFile(suffix=".cubin") as t:
        t.write(cubin)
        t.flush()
        return subprocess.run([tool, "-sass", t.name], capture_output=True, text=True, check=True).stdout


def main(argv):
    causal = "causal" in argv
    configs, sass_out = {}, None
    for i, a in enumerate(argv):
        if a == "--config":
            k, _, v = argv[i + 1].partition("=")
            configs[k] = v not in ("0", "false", "False", "")
        if a == "--sass-out":
            sass_out = argv[i + 1]
    if "--previous" in argv or "--before" in argv:
        configs = dict(PREVIOUS, **configs)
    src, ptx, cubin, usage = flash_kernel(causal, configs)
    if "--before" in argv:
        from tilelang import _core
        src = flash_before(src)
        ptx = _core.cuda.compile(src, "kernel.cu", "sm_90a", False, True, [])["ptx"]
        r = _core.cuda.compile(src, "kernel.cu", "sm_90a", False, False, [])
        cubin, usage = r["cubin"], r["usage"]
    loop = ptx_main_loop(ptx)
    ops = collections.Counter(ptx_opcode(x) for x in loop)
    regs = usage[0]["registers"] if usage else "?"
    print(f"flash causal={causal} configs={configs}{' before' if '--before' in argv else ''}: registers {regs}")
    print(f"  PTX main loop: {len(loop)} instructions; " + ", ".join(f"{k} {v}" for k, v in ops.most_common(12)))
    sass = sass_of(cubin)
    if sass is None:
        print("  SASS: no cuobjdump (set TL_CUOBJDUMP)")
        return
    if sass_out:
        with open(sass_out, "w") as fo:
            fo.write(sass)
    body = sass_main_loop(sass)
    c = collections.Counter(body)
    print(f"  SASS main loop: {len(body)} instructions; " + ", ".join(f"{k} {v}" for k, v in c.most_common(16)))


if __name__ == "__main__":
    main(sys.argv[1:])
