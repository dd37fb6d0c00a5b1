"""Target helpers (TileLang's tilelang.utils.target / tilelang.backend.target)."""
from .. import _core

__all__ = ["determine_target", "check_cuda_availability", "target_is_cuda", "target_is_hip", "AVALIABLE_TARGETS",
           "SUPPORTED_TARGETS"]

SUPPORTED_TARGETS = {
    "auto": "cuda when a CUDA device is visible, else cpu (ascend for is_npu kernels)",
    "cpu": "C++ built by the system compiler (TileLang's 'c' / 'llvm' map here)",
    "cuda": "CUDA C++ through NVRTC, launched with the driver API",
    "ascend": "the Ascend NPU simulator",
}
AVALIABLE_TARGETS = list(SUPPORTED_TARGETS)

_ALIASES = {"c": "cpu", "llvm": "cpu", "cpu": "cpu", "npu": "ascend", "npuir": "ascend", "ascendc": "ascend", "pto": "ascend"}


def check_cuda_availability():
    """True when a CUDA device can run kernels here."""
    return bool(_core.cuda_available())


def _name(target):
    if isinstance(target, dict):
        kind = target.get("kind", "auto")
        arch = target.get("arch")
        return f"{kind} -arch={arch}" if arch and kind == "cuda" else kind
    return str(target)


def determine_target(target="auto", return_object=False):
    """The concrete target "auto" (or a TileLang spelling: "c", "llvm", {"kind": "cuda", "arch": ...})
    resolves to; a tilelang.tvm.target.Target when return_object."""
    name = _name(target)
    name = _ALIASES.get(name.split()[0], None) or name
    resolved = str(_core.resolve_target(name))
    if return_object:
        from ..tvm.target import Target
        return Target(resolved)
    return resolved


def target_is_cuda(target):
    return str(getattr(target, "kind", target)).split()[0].startswith("cuda")


def target_is_hip(target):
    return False
