"""The compiled Kernel object returned by tilelang.compile and @tilelang.jit."""
from dataclasses import dataclass
from typing import Tuple, Union

from .. import _core
from .pass_config import normalize_pass_configs

_EXECUTION_BACKENDS = ("auto", "cython", "ctypes", "dlpack", "torch", "nvrtc", "tvm_ffi")


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter as the runtime sees it."""
    name: str
    is_tensor: bool
    dtype: str
    shape: Tuple[Union[int, str], ...]  # ints, or names/expressions of T.dynamic variables
    strides: Tuple[Union[int, str], ...]  # empty: contiguous row-major
    role: str  # "input", "output" (out_idx) or "workspace" (workspace_idx)

    def is_scalar(self):
        return not self.is_tensor

    def is_unsigned(self):
        return self.dtype.startswith("uint")

    def is_float4(self):
        return self.dtype.startswith("float4")

    def is_float8(self):
        return self.dtype.startswith("float8")

    def is_boolean(self):
        return self.dtype == "bool"

    def is_dynamic(self):
        return any(not isinstance(d, int) for d in self.shape)

    def torch_dtype(self):
        from .adapter import torch_dtype
        return torch_dtype(self.dtype)

    def tilelang_dtype(self):
        from ..language.dtypes import to_dtype
        return to_dtype(self.dtype)


def _normalize_idx(idx, what):
    if idx is None:
        return []
    if isinstance(idx, bool):
        raise ValueError(f"{what} must be an int or a list of ints, got {idx!r}")
    if isinstance(idx, int):
        return [idx]
    if isinstance(idx, (list, tuple)) and all(isinstance(i, int) and not isinstance(i, bool) for i in idx):
        return list(idx)
    raise ValueError(f"{what} must be an int or a list of ints, got {idx!r}")


def _normalize_flags(flags):
    if flags is None:
        return []
    if isinstance(flags, str):
        return flags.split()
    if isinstance(flags, (list, tuple)) and all(isinstance(f, str) for f in flags):
        return list(flags)
    raise ValueError(f"compile_flags must be a string or a list of strings, got {flags!r}")


def _normalize_target(target):
    if target is None or (isinstance(target, str) and target == "auto"):
        # As in TileLang: "auto" inside `with tvm.target.Target("c"):` is that target.
        from ..tvm.target import Target as _ScopedTarget  # noqa: PLC0415 (the tvm namespace imports jit)
        scoped = _ScopedTarget.current()
        return scoped.tilelang_target if scoped is not None else "auto"
    if hasattr(target, "tilelang_target"):  # a tvm.target.Target
        return target.tilelang_target
    if isinstance(target, _core.Target):
        return str(target)
    if isinstance(target, str):
        return target
    if isinstance(target, dict):  # TVM's config form, e.g. {"kind": "cuda", "arch": "sm_90"}
        from ..tvm.target import Target as _DictTarget  # noqa: PLC0415 (the tvm namespace imports jit)
        return _DictTarget(target).tilelang_target
    raise ValueError(f"target must be a string such as \"auto\", \"cpu\", \"cuda\" or \"ascend\" (or a dict such as "
                     f"{{\"kind\": \"cuda\", \"arch\": \"sm_90\"}}), got {target!r}")


def prelower(func, target="auto", pass_configs=None, compile_flags=None):
    """Lowers and generates code for `func` exactly as tilelang.compile(func, target=target,
    pass_configs=..., compile_flags=...) would, without building it; that compile (in this process)
    then reuses the result and only runs the system compiler. Returns (lowered PrimFunc, kernel
    source, resolved target string). The autotuner's TileSight ranking uses it (runtime/compile.h)."""
    if target is None:
        import os  # noqa: PLC0415
        target = os.environ.get("TILELANG_DEFAULT_TARGET", "auto")
    return _core.prelower(_ir_of(func), _normalize_target(target), normalize_pass_configs(pass_configs),
                          _normalize_flags(compile_flags))


def _ir_of(func):
    """The C++ PrimFunc of a @T.prim_func object (or a PrimFunc itself)."""
    prim_type = getattr(_core, "PrimFunc", None)
    if prim_type is not None and isinstance(func, prim_type):
        return func
    ir = getattr(func, "ir", None)
    if ir is not None:
        return ir
    raise TypeError(f"expected a @T.prim_func function, got {type(func).__name__}; "
                    "a @tilelang.jit builder must return the @T.prim_func it defines")


class JITKernel(_core.CompiledKernel):
    """A compiled kernel. Call it with the kernel's inputs (tensors and scalars); parameters listed in
    out_idx are allocated by the runtime and returned (one tensor, or a tuple)."""

    def __init__(self, func=None, out_idx=None, target="auto", pass_configs=None, verbose=False,
                 execution_backend="auto", compile_flags=None, workspace_idx=None, *, _from=None):
        if execution_backend not in _EXECUTION_BACKENDS:
            raise ValueError(f"unknown execution_backend {execution_backend!r}; supported: "
                             + ", ".join(repr(b) for b in _EXECUTION_BACKENDS)
                             + " (all run through tilelang's C++ runtime)")
        self.execution_backend = execution_backend
        if _from is not None:  # wrap an existing compiled kernel (no recompilation)
            super().__init__(_from)
            self.prim_func = None
            return
        configs = normalize_pass_configs(pass_configs)
        super().__init__(_ir_of(func), _normalize_target(target), _normalize_idx(out_idx, "out_idx"),
                         _normalize_idx(workspace_idx, "workspace_idx"), configs, _normalize_flags(compile_flags),
                         bool(verbose))
        self.prim_func = func

    @property
    def params(self):
        """KernelParam for every parameter, in order."""
        return [KernelParam(n, t, d, tuple(s), tuple(st), r) for n, t, d, s, st, r in self.param_specs()]

    def get_kernel_source(self, kernel_only=True):
        """The emitted kernel source (C++ on cpu, CUDA C++ on cuda, the lowered NPU program on ascend)."""
        return self.kernel_source

    def show_source(self, which="kernel"):
        """Prints the kernel source ("kernel"), the host source ("host") or both."""
        if which == "kernel":
            print(self.get_kernel_source())
        elif which == "host":
            print(self.get_host_source())
        elif which == "both":
            print("===== Kernel Source =====")
            print(self.get_kernel_source())
            print("===== Host Source =====")
            print(self.get_host_source())
        else:
            raise ValueError(f"which must be 'kernel', 'host' or 'both', got {which!r}")

    def export_sources(self, kernel_path=None, host_path=None):
        """Writes the kernel source and/or the host source to files."""
        import os
        if kernel_path is None and host_path is None:
            raise ValueError("export_sources needs kernel_path and/or host_path")
        for path, text in ((kernel_path, self.get_kernel_source()), (host_path, self.get_host_source())):
            if path is None:
                continue
            if os.path.dirname(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)

    def print_source_code(self, which="kernel", file=None):
        """TileLang's older name: prints the source, or writes the kernel source to `file`."""
        if file is not None:
            self.export_sources(kernel_path=file)
        else:
            self.show_source(which)

    def run_once(self, func=None):
        """Runs the kernel (or `func`) once on generated inputs; returns its outputs."""
        return self.get_profiler().run_once(func)

    def update_tuner_result(self, latency, config, ref_latency):
        self.latency, self.config, self.ref_latency = latency, config, ref_latency
        return self

    def get_tuner_result(self):
        if getattr(self, "latency", None) is None:
            raise ValueError("this kernel was not tuned (no autotuner result)")
        return {"latency": self.latency, "config": self.config, "ref_latency": getattr(self, "ref_latency", None)}

    def export_library(self, kernel_file, name=None):
        """Writes this kernel as a standalone shared library `kernel_file` (e.g. "gemm.so") plus a C
        header next to it ("gemm.h") declaring a plain C entry point: one pointer per tensor, the scalars,
        one int64_t per dynamic dimension and, on cuda, a stream. A C or C++ program calls it without
        Python or tilelang (docs/AOT.md). `name` is the entry's C name (default: the file's stem without
        a leading "lib"). Returns the header's path."""
        import os
        if not isinstance(kernel_file, (str, os.PathLike)):
            raise TypeError(f"export_library takes a file path, got {type(kernel_file).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string, got {type(name).__name__}")
        _, header, _ = self._export_library(os.fspath(kernel_file), name or "")
        return header

    def get_host_source(self):
        """The host-side source where it is separate from the kernel source ("" on cpu)."""
        return self.host_source

    # __call__ is the C++ one (_core.CompiledKernel.__call__): a Python-level wrapper would add ~0.4 us
    # to every launch. cuda kernels take device tensors; a cuda kernel called with numpy arrays is
    # handed by the C++ call path to _call_staged below.

    def estimate(self, machine=None, dyn=None, verbose=True):
        """TileSight's estimate of this kernel on its target (or on `machine`, e.g.
        tilelang.tilesight.A100_SXM), from its IR, without running it: time, bound (compute / memory /
        latency / occupancy), occupancy, waves. Printed when `verbose`; returned as a
        tilelang.tilesight.Estimate. `dyn`: values of dynamic dimensions ({"M": 4096})."""
        from .. import tilesight  # noqa: PLC0415
        est = tilesight.estimate(self, target=self.target, machine=machine, dyn=dyn)
        if verbose:
            print(est)
        return est

    def get_profiler(self, tensor_supply_type=None):
        from ..profiler import Profiler, TensorSupplyType
        return Profiler(self, TensorSupplyType.Auto if tensor_supply_type is None else tensor_supply_type)

    def __repr__(self):
        sig = ", ".join(f"{p.name}: {p.dtype}{list(p.shape) if p.is_tensor else ''}" for p in self.params)
        return f"<tilelang Kernel {self.name}({sig}) target={self.target}>"


Kernel = JITKernel


def _is_ndarray(a):
    return type(a).__module__ == "numpy" and type(a).__name__ == "ndarray"


def _call_staged(kernel, args):
    """Runs cuda `kernel` on numpy arguments: they are copied to the device through torch, the kernel
    runs, every writable numpy argument is copied back, and outputs are returned as numpy arrays, so
    host-side examples run unchanged on cuda (slowly: use torch tensors for speed)."""
    try:
        import torch
    except ImportError:
        raise _core.ArgumentError(
            "this kernel runs on cuda and was called with numpy arrays; pass torch (or other DLPack) tensors on "
            "the GPU, or install torch so that numpy arguments can be staged to the device") from None
    import numpy as np

    special = {"bfloat16": (np.uint16, torch.bfloat16), "float8_e4m3fn": (np.uint8, torch.float8_e4m3fn),
               "float8_e5m2": (np.uint8, torch.float8_e5m2)}
    if hasattr(torch, "float8_e8m0fnu"):
        special["float8_e8m0fnu"] = (np.uint8, torch.float8_e8m0fnu)

    def to_dev(a):
        a = np.ascontiguousarray(a)
        if not a.flags.writeable:  # torch.from_numpy warns on read-only memory (only inputs get here)
            a = a.copy()
        if a.dtype.name in special:
            store, tdt = special[a.dtype.name]
            return torch.from_numpy(a.view(store)).cuda().view(tdt)
        return torch.from_numpy(a).cuda()

    def to_host(t, like_dtype=None):
        name = str(t.dtype).replace("torch.", "")
        if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"):
            import ml_dtypes
            store = np.uint16 if name == "bfloat16" else np.uint8
            h = t.view(torch.uint16 if name == "bfloat16" else torch.uint8).cpu().numpy()
            return h.view(getattr(ml_dtypes, name))
        return t.cpu().numpy()

    dev = [to_dev(a) if _is_ndarray(a) else a for a in args]
    out = _core.CompiledKernel.__call__(kernel, *dev)
    torch.cuda.synchronize()
    for a, d in zip(args, dev):
        if _is_ndarray(a) and a.flags.writeable:
            a[...] = to_host(d)
    if out is None:
        return None
    if isinstance(out, tuple):
        return tuple(to_host(o) for o in out)
    return to_host(out)


_core._set_numpy_stager(_call_staged)
