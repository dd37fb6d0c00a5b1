"""Helpers for the CUDA tests: compile with NVRTC, move numpy arrays to and from the device, and
skip cleanly where there is no NVRTC or no GPU (CI compiles, the GPU machine also runs)."""
import os

import numpy as np
import pytest

from tilelang import _core

cuda = _core.cuda

COMPILE_ARCHS = ["sm_80", "sm_90a"]


def has_nvrtc():
    return cuda.nvrtc_available()[0]


SKIP_GPU = os.environ.get("TILELANG_SKIP_GPU_TESTS", "")


def has_gpu():
    return not SKIP_GPU and cuda.driver_available()[0] and cuda.device_count() > 0


def _no_gpu_reason():
    if SKIP_GPU:
        return "GPU tests disabled: " + SKIP_GPU
    return "no CUDA device (" + (cuda.driver_available()[1] or "0 devices") + ")"


requires_nvrtc = pytest.mark.skipif(not has_nvrtc(), reason="NVRTC not available: " + cuda.nvrtc_available()[1])
# The GPU tier (tests/conftest.py deselects it in CI and skips it where no device is visible).
requires_gpu = pytest.mark.gpu


def device_arch(device=0):
    """The architecture to compile for on this device (sm_90 -> sm_90a, to use its instructions)."""
    arch = cuda.device_info(device)["arch"]
    return arch + "a" if arch == "sm_90" else arch


def compile_module(source, arch=None, name="test.cu", ptx=False, **kw):
    """Compiles and loads `source` on device 0. ptx=True loads the PTX instead of the cubin (the
    driver JIT-compiles it: used to run compute_80 code paths on a newer GPU)."""
    arch = arch or device_arch()
    r = cuda.compile(source, name=name, arch=arch, want_ptx=ptx, **kw)
    image = r["ptx"].encode() if ptx else r["cubin"]
    return cuda.Module(image, 0), r


class DeviceArray:
    """A device copy of a numpy array (freed on deletion)."""

    def __init__(self, host):
        host = np.ascontiguousarray(host)
        self.dtype, self.shape = host.dtype, host.shape
        self.nbytes = host.nbytes
        self.ptr = cuda.malloc(max(self.nbytes, 1), 0)
        if self.nbytes:
            cuda.memcpy_htod(self.ptr, host.tobytes(), 0)

    @classmethod
    def empty(cls, shape, dtype, fill_byte=0xFF):
        """Uninitialised-looking memory: poisoned with `fill_byte` so unwritten elements show."""
        arr = cls(np.zeros(shape, dtype))
        cuda.memset(arr.ptr, fill_byte, arr.nbytes, 0)
        return arr

    def numpy(self):
        raw = cuda.memcpy_dtoh(self.ptr, self.nbytes, 0)
        return np.frombuffer(raw, dtype=self.dtype).reshape(self.shape).copy()

    def arg(self):
        return ("ptr", self.ptr)

    def __del__(self):
        try:
            cuda.free(self.ptr, 0)
        except Exception:  # noqa: BLE001 - interpreter shutdown or a dead context
            pass


# ------------------------------------------------------------------------------------------------
# Running @T.prim_func kernels through the cuda backend (lower + codegen + NVRTC + driver), with
# the runtime's argument slots: a pointer per tensor, i64/f64 per scalar, then one i64 per dynamic
# dimension (bound from the tensors' shapes).

def build(func, arch=None, configs=None, flags=None):
    """Lowers, generates and compiles `func` (a tilelang.language.PrimFunc). Returns the dict of
    cuda.build_func: source, meta, cubin, usage, seconds, ..."""
    ir = func.ir if hasattr(func, "ir") else func
    return cuda.build_func(ir, arch or "", configs or {}, flags or [])


class Runner:
    """A compiled kernel callable on numpy arrays: tensors are copied to the device, the kernel
    runs, and every tensor argument is copied back (returned as a list, in parameter order)."""

    def __init__(self, func, arch=None, configs=None):
        self.func = func
        self.built = build(func, arch or device_arch(), configs)
        self.kernel = cuda.Kernel(self.built["cubin"], self.built["meta"], self.built["num_params"],
                                  self.built["num_dyn"])
        self.source = self.built["source"]

    def _slots(self, args):
        params = self.func.params
        if len(args) != len(params):
            raise TypeError(f"kernel takes {len(params)} arguments, got {len(args)}")
        slots, arrays, dev = [], [], []
        for p, a in zip(params, args):
            if type(p).__name__ == "Buffer":
                d = a if isinstance(a, DeviceArray) else DeviceArray(a)
                dev.append(d)
                arrays.append(d)
                slots.append(("ptr", d.ptr))
            else:
                kind = "f64" if "float" in str(p.dtype) else "i64"
                slots.append((kind, float(a) if kind == "f64" else int(a)))
        for v in self.func.ir.dynamic_vars:
            val = None
            for p, a in zip(params, args):
                if type(p).__name__ != "Buffer":
                    if p.same_as(v) if hasattr(p, "same_as") else False:
                        val = int(a)
                    continue
                for i, s in enumerate(p.shape):
                    if hasattr(s, "same_as") and s.same_as(v):
                        val = (a.shape if not isinstance(a, DeviceArray) else a.shape)[i]
                        break
                if val is not None:
                    break
            if val is None:
                raise ValueError(f"cannot bind dynamic dimension {v.name} from the arguments")
            slots.append(("i64", int(val)))
        return slots, dev

    def __call__(self, *args):
        slots, dev = self._slots(args)
        self.kernel.launch(slots)
        cuda.synchronize(0)
        return [d.numpy() for d in dev]


class EmuRunner(Runner):
    """The same kernel run by the CPU emulator of lowered cuda IR (src/target/cuda/emulator.h):
    no GPU needed. Also returns the races the emulator found (must be empty)."""

    def __init__(self, func, arch="sm_80", configs=None, rank=0, world=1):
        self.func = func
        self.arch = arch
        self.configs = configs or {}
        self.rank, self.world = rank, world  # the device a distributed kernel runs as (T.get_rank())

    def __call__(self, *args):
        host = []
        slots = []
        params = self.func.params
        for p, a in zip(params, args):
            if type(p).__name__ == "Buffer":
                arr = np.ascontiguousarray(np.array(a, copy=True))
                host.append(arr)
                slots.append(("ptr", arr.ctypes.data))
            else:
                kind = "f64" if "float" in str(p.dtype) else "i64"
                slots.append((kind, float(a) if kind == "f64" else int(a)))
        for v in self.func.ir.dynamic_vars:
            val = None
            for p, a in zip(params, args):
                if type(p).__name__ == "Buffer":
                    for i, s in enumerate(p.shape):
                        if hasattr(s, "same_as") and s.same_as(v):
                            val = np.asarray(a).shape[i]
                            break
                elif hasattr(p, "same_as") and p.same_as(v):
                    val = int(a)
                if val is not None:
                    break
            slots.append(("i64", int(val)))
        self.report = cuda.emulate_func(self.func.ir, slots, self.arch, self.configs, self.rank, self.world)
        return host
