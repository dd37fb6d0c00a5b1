"""Shared helpers of the GPU benchmarks (bench/gpu_*.py): timing with CUDA events (median of
repetitions, L2 flushed before each), result records appended to $TL_BENCH_JSON (one JSON object per
line), and a launcher running tilelang cuda kernels on torch tensors (torch's current stream).
"""
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python", "cuda"))

import torch  # noqa: E402

from tilelang import _core  # noqa: E402

cuda = _core.cuda

from gpu_timing import bench, flush_l2  # noqa: E402,F401 - re-exported for the bench scripts


def record(**kw):
    kw.setdefault("device", torch.cuda.get_device_name())
    line = json.dumps(kw, sort_keys=True)
    print(line, flush=True)
    path = os.environ.get("TL_BENCH_JSON")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def device_arch():
    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    return arch + "a" if arch == "sm_90" else arch


class TorchKernel:
    """A tilelang kernel (tilelang.language.PrimFunc) compiled for the current device and called on
    torch tensors / Python scalars, in parameter order, on torch's current stream."""

    def __init__(self, func, configs=None):
        t = time.time()
        self.func = func
        self.built = cuda.build_func(func.ir, device_arch(), configs or {}, [])
        self.compile_seconds = time.time() - t
        self.kernel = cuda.Kernel(self.built["cubin"], self.built["meta"], self.built["num_params"],
                                  self.built["num_dyn"])
        self.is_buffer = [type(p).__name__ == "Buffer" for p in func.params]
        self.dyn = []  # (param index, dim) binding each dynamic dimension
        for v in func.ir.dynamic_vars:
            for i, p in enumerate(func.params):
                if self.is_buffer[i]:
                    hit = [d for d, s in enumerate(p.shape) if hasattr(s, "same_as") and s.same_as(v)]
                    if hit:
                        self.dyn.append((i, hit[0]))
                        break
        self.registers = self.built["usage"][0]["registers"] if self.built["usage"] else 0

    def slots(self, args):
        out = []
        for is_buf, a in zip(self.is_buffer, args):
            if is_buf:
                out.append(("ptr", a.data_ptr()))
            elif isinstance(a, float):
                out.append(("f64", a))
            else:
                out.append(("i64", int(a)))
        for i, d in self.dyn:
            out.append(("i64", int(args[i].shape[d])))
        return out

    def __call__(self, *args):
        self.kernel.launch(self.slots(args), torch.cuda.current_stream().cuda_stream,
                           torch.cuda.current_device())

    def prepared(self, *args):
        """A zero-argument launcher with the argument slots computed once (overhead benchmarks)."""
        slots = self.slots(args)
        stream = torch.cuda.current_stream().cuda_stream
        dev = torch.cuda.current_device()
        launch = self.kernel.launch
        return lambda: launch(slots, stream, dev)


def rel_err(got, ref):
    got, ref = got.float(), ref.float()
    return ((got - ref).norm() / ref.norm().clamp_min(1e-12)).item()


def sass_loop_stats(cubin):
    """Instruction counts of the largest loop (backward branch) of a cubin's SASS, through cuobjdump
    when the machine has it: {"instrs": n, "HGMMA": .., "HMMA": .., ...}, or {} without cuobjdump."""
    import collections
    import flash_loop_counts as flc
    sass = flc.sass_of(cubin)
    if not sass:
        return {}
    body = flc.largest_sass_loop(flc.sass_instructions(sass), predicated=False)
    if not body:
        return {}
    ops = collections.Counter(flc.sass_opcode(t).split(".")[0] for t in body)
    keep = ("HGMMA", "HMMA", "LDSM", "LDGSTS", "BAR", "MUFU", "FFMA", "FMUL", "IMAD", "LDL", "STL")
    out = {"instrs": len(body)}
    out.update({k: ops[k] for k in keep if ops.get(k)})
    return out
