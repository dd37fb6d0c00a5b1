"""Compatibility path of GemmWarpPolicy (TileLang's `tilelang.primitives.gemm.base`)."""
from ...language.tile_ops import GemmWarpPolicy  # noqa: F401

__all__ = ["GemmWarpPolicy"]
