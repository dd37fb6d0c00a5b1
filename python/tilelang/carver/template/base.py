"""BaseTemplate: a kernel shape plus an architecture."""
from ..arch import TileDevice, auto_infer_current_arch

__all__ = ["BaseTemplate"]


class BaseTemplate:
    def __init__(self):
        self._arch = None

    def with_arch(self, arch):
        if not isinstance(arch, TileDevice):
            raise TypeError(f"with_arch expects a tilelang.carver.arch device (CUDA(...), CPU(...)), got {arch!r}")
        self._arch = arch
        return self

    @property
    def arch(self):
        if self._arch is None:
            self._arch = auto_infer_current_arch()
        return self._arch

    def has_arch(self):
        return self._arch is not None

    def is_cuda_arch(self):
        return self.arch.platform == "CUDA"

    def is_cpu_arch(self):
        return self.arch.platform == "CPU"

    def equivalent_function(self):
        """TileLang returns the TVM PrimFunc of the computation; here the template's description."""
        return self

    def recommend_hints(self, topk=10):
        raise NotImplementedError
