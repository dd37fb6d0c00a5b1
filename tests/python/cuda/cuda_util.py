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
requires_gpu = pytest.mark.skipif(not has_gpu(), reason=_no_gpu_reason())


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
