"""Compatibility package: `tilelang.primitives.gemm.base.GemmWarpPolicy`."""
from . import gemm  # noqa: F401
