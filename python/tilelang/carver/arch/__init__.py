"""Architecture facts the carver's search uses (TileLang's tilelang.carver.arch)."""
from . import driver
from .arch_base import TileDevice
from .cpu import CPU
from .cuda import CDNA, CUDA

__all__ = ["TileDevice", "CUDA", "CDNA", "CPU", "driver", "get_arch", "auto_infer_current_arch", "is_cuda_arch",
           "is_cpu_arch"]


def get_arch(target="auto"):
    """The TileDevice of a target ("cuda", "cpu"/"c"/"llvm", "auto", a tvm Target, ...)."""
    name = str(getattr(target, "tilelang_target", target)).split()[0]
    if name == "auto":
        name = "cuda" if driver.has_cuda_device() else "cpu"
    if name.startswith("cuda"):
        return CUDA(target)
    if name in ("cpu", "c", "llvm"):
        return CPU(target)
    if name in ("hip", "rocm"):
        return CDNA(target)
    raise ValueError(f"carver: no architecture model for target {target!r} (cuda and cpu are modelled)")


def auto_infer_current_arch():
    """The TileDevice of the machine: its CUDA device, else the cpu."""
    return get_arch("auto")


def is_cuda_arch(arch):
    return isinstance(arch, CUDA)


def is_cpu_arch(arch):
    return isinstance(arch, CPU)
