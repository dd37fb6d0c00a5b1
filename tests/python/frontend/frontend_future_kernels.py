"""A kernel module with postponed annotations (annotations are strings until evaluated)."""
from __future__ import annotations

import tilelang.language as T


def build(n, dtype="float16"):
    @T.prim_func
    def k(A: T.Tensor((n,), dtype), m: T.int32):
        with T.Kernel(1, threads=32) as bx:
            A[0] = T.cast(m, dtype)
    return k
