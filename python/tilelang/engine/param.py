"""tilelang.engine.param.KernelParam (the same class as tilelang.jit.KernelParam)."""
from ..jit.kernel import KernelParam

__all__ = ["KernelParam"]
