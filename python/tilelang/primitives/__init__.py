"""Compatibility package: `tilelang.primitives.gemm.base.GemmWarpPolicy`."""
